# Scratch (map27): fit the contact normal at every isolated recorded bounce by one-row restarts.
import sys, os, json, glob, tempfile, numpy as np, rlfit
from scipy.optimize import least_squares
D = "/work/shared/datasets/lobot"
R_SPIN = 91.25  # spin residual scaled to uu/s
m = rlfit.Model("ball")
arena = rlfit.Arena()
co = dict(zip(m.coefficients['names'], m.coefficients['values']))
RC = co['contact_radius']; MARGIN = co.get('contact_margin', 0.3)
tri = np.loadtxt(f"{D}/meshes/pitch.dat").reshape(-1, 3, 3)
A, B, C = tri[:, 0], tri[:, 1], tri[:, 2]
fn = np.cross(B - A, C - A); fn /= np.linalg.norm(fn, axis=1)[:, None]
# vertex normals (area-weighted, exact shared vertices)
verts, inv = np.unique(tri.reshape(-1, 3), axis=0, return_inverse=True)
inv = inv.reshape(-1, 3)
area2 = np.linalg.norm(np.cross(B - A, C - A), axis=1)
def vnormals(sign):
    vn = np.zeros_like(verts)
    for j in range(3): np.add.at(vn, inv[:, j], (fn * sign[:, None]) * area2[:, None])
    return vn
lo = tri.min(axis=1); hi = tri.max(axis=1)

def closest_pt(p, a, b, c):  # Ericson
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = ab @ ap, ac @ ap
    if d1 <= 0 and d2 <= 0: return a, (1, 0, 0)
    bp = p - b; d3, d4 = ab @ bp, ac @ bp
    if d3 >= 0 and d4 <= d3: return b, (0, 1, 0)
    vc = d1 * d4 - d3 * d2
    if vc <= 0 and d1 >= 0 and d3 <= 0:
        v = d1 / (d1 - d3); return a + v * ab, (1 - v, v, 0)
    cp = p - c; d5, d6 = ab @ cp, ac @ cp
    if d6 >= 0 and d5 <= d6: return c, (0, 0, 1)
    vb = d5 * d2 - d1 * d6
    if vb <= 0 and d2 >= 0 and d6 <= 0:
        w = d2 / (d2 - d6); return a + w * ac, (1 - w, 0, w)
    va = d3 * d6 - d5 * d4
    if va <= 0 and (d4 - d3) >= 0 and (d5 - d6) >= 0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6)); return b + w * (c - b), (0, 1 - w, w)
    den = 1 / (va + vb + vc); v = vb * den; w = vc * den
    return a + ab * v + ac * w, (1 - v - w, v, w)

def manifold(x0, r):
    cand = np.where(np.all(lo - r <= x0, axis=1) & np.all(hi + r >= x0, axis=1))[0]
    out = []
    for t in cand:
        q, bc = closest_pt(x0, A[t], B[t], C[t])
        d = np.linalg.norm(x0 - q)
        if d < r:
            n = fn[t] if fn[t] @ (x0 - A[t]) > 0 else -fn[t]
            out.append(dict(tri=int(t), pen=float(r - d), point=np.asarray(q).tolist(), face=np.asarray(n).tolist(), bc=[float(b) for b in bc]))
    out.sort(key=lambda c: -c['pen'])
    return out

def restart(state, dt):
    t = m.predict(state, 3 * dt + 1e-9, dt_s=dt)
    return t[3, 1:]

def run_with_normal(state, dt, n):
    if n is None: os.environ.pop("RLFIT_MAP27_N", None)
    else: os.environ["RLFIT_MAP27_N"] = "%.17g,%.17g,%.17g" % tuple(n)
    out = restart(state, dt)
    os.environ.pop("RLFIT_MAP27_N", None)
    return out

def debug_run(state, dt):
    f = tempfile.TemporaryFile(); saved = os.dup(2); os.dup2(f.fileno(), 2)
    os.environ["RLFIT_MAP27_DEBUG"] = "1"
    try: out = restart(state, dt)
    finally:
        os.environ.pop("RLFIT_MAP27_DEBUG", None); os.dup2(saved, 2); os.close(saved)
    f.seek(0); lines = [l.split()[1:] for l in f.read().decode().splitlines() if l.startswith("MAP27")]
    return out, [list(map(float, l)) for l in lines]

def err(out, rec):
    return float(np.linalg.norm(out[3:6] - rec[3:6])), float(np.linalg.norm(out[6:9] - rec[6:9]))

def basis(n):
    a = np.array([1.0, 0, 0]) if abs(n[0]) < 0.9 else np.array([0, 1.0, 0])
    e1 = np.cross(n, a); e1 /= np.linalg.norm(e1); e2 = np.cross(n, e1)
    return e1, e2

def fit_normal(state, dt, rec, starts, nref):
    e1, e2 = basis(nref)
    def nof(p): n = nref + p[0] * e1 + p[1] * e2; return n / np.linalg.norm(n)
    def res(p):
        o = run_with_normal(state, dt, nof(p))
        return np.concatenate([o[3:6] - rec[3:6], R_SPIN * (o[6:9] - rec[6:9])])
    best = None
    for s in starts:
        p0 = np.array([(s - nref) @ e1, (s - nref) @ e2]) / max(s @ nref, 1e-3)
        r = least_squares(res, p0, diff_step=1e-4, x_scale=0.02, max_nfev=200)
        if best is None or r.cost < best.cost: best = r
    return nof(best.x), best

def find_bounces(e):
    S = e['states']; dt = e['step_dt_s']; n = len(S)
    free = ~np.asarray(arena.collide_batch(S[:, 0:3], RC + MARGIN)['hit'], bool)
    out = []; k = 0
    while k + 4 < n:
        whole = np.linalg.norm(S[k+3, 3:6] - S[k, 3:6])
        if free[k] and free[k+3] and whole > 300 and np.allclose(dt[k:k+3], dt[k]) \
                and np.linalg.norm(S[k+1, 3:6] - S[k, 3:6]) < 50 \
                and np.linalg.norm(S[k+4, 3:6] - S[k+3, 3:6]) < 50:
            f1 = np.linalg.norm(S[k+1, 3:6] - S[k, 3:6]) / whole
            f2 = np.linalg.norm(S[k+2, 3:6] - S[k, 3:6]) / whole
            out.append((k, [float(f1), float(f2)])); k += 3; continue
        k += 1
    return out

if __name__ == "__main__":
    files = sorted(glob.glob(f"{D}/ball_trajectories/episode_*.csv"))
    lim = int(sys.argv[1]) if len(sys.argv) > 1 else 10**9
    count = 0
    for path in files:
        ep = int(path[-10:-4])
        e = rlfit.read_recording(path)[0]
        S = e['states']
        for k, frac in find_bounces(e):
            if count >= lim: break
            count += 1
            dt = e['step_dt_s'][k]; st = S[k]; rec = S[k+3]
            out0, dbg = debug_run(st, dt)
            hits = [l for l in dbg if l[9] * l[4] + l[10] * l[5] + l[11] * l[6] < 0]
            if not hits: print(json.dumps(dict(ep=ep, k=k, skip="no approaching contact")), flush=True); continue
            h = hits[0]; x0 = np.array(h[0:3]); r = h[8]; ntoday = np.array(h[4:7])
            man = manifold(x0, r)
            faces = []
            for c in man:
                if all(np.degrees(np.arccos(min(1, np.dot(c['face'], f['face'])))) > 1.0 for f in faces): faces.append(c)
            deep = man[:4]
            w = np.array([c['pen'] for c in deep]); avg = (w[:, None] * np.array([c['face'] for c in deep])).sum(0)
            avg /= np.linalg.norm(avg)
            # Phong at the deepest triangle's closest point
            t0 = man[0]['tri'] if man else None
            phong = None
            if t0 is not None:
                sign = np.sign(np.einsum('ij,ij->i', fn, x0 - A))  # orient every face toward x0's side
                vn = vnormals(sign)
                nv = vn[inv[t0]]; nv /= np.linalg.norm(nv, axis=1)[:, None]
                phong = (np.array(man[0]['bc'])[:, None] * nv).sum(0); phong /= np.linalg.norm(phong)
            e_today = err(out0, rec)
            o_avg = run_with_normal(st, dt, avg); e_avg = err(o_avg, rec)
            e_phong = err(run_with_normal(st, dt, phong), rec) if phong is not None else None
            starts = [ntoday]
            for cand in [avg, phong]:
                if cand is not None and all(np.dot(cand, q) < 1 - 1e-9 for q in starts): starts.append(cand)
            nfit, r = fit_normal(st, dt, rec, starts, ntoday)
            o_fit = run_with_normal(st, dt, nfit); e_fit = err(o_fit, rec)
            print(json.dumps(dict(ep=ep, k=k, frac=frac, x0=x0.tolist(), r=r, ticks=len(dbg), vin=h[9:12],
                ntoday=ntoday.tolist(), ntri=int(h[3]), pen=h[7], avg=avg.tolist(), phong=None if phong is None else phong.tolist(),
                nfit=nfit.tolist(), e_today=e_today, e_avg=e_avg, e_phong=e_phong, e_fit=e_fit,
                faces=[dict(tri=c['tri'], pen=c['pen'], face=c['face'], point=c['point']) for c in faces],
                man=[dict(tri=c['tri'], pen=c['pen']) for c in man[:8]], nman=len(man)), default=lambda o: np.asarray(o).tolist()), flush=True)
