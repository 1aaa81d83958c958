# Scratch (ramp30): per-bounce fitted normal at fast ramp/curve contacts (restart, four rows on),
# against candidate normals at the model's contact tick.
import sys, os, json, glob, tempfile, numpy as np
sys.path.insert(0, '/work/wt/ramp30/scripts')
import rlfit, mesh_patches, ball_classes as bc
from scipy.optimize import least_squares
root = '/work/shared/datasets/lobot'
tris = mesh_patches.read_triangles(os.path.join(root, 'meshes', 'pitch.dat'))
mesh = mesh_patches.Mesh(tris)
labels = np.array(mesh.labels)
A, B, C = tris[:, 0], tris[:, 1], tris[:, 2]
fn = np.cross(B - A, C - A); fn /= np.linalg.norm(fn, axis=1)[:, None]
cent = tris.mean(axis=1)
lo, hi = tris.min(axis=1), tris.max(axis=1)
m = rlfit.Model('ball')
H = 4; RS = 91.25
PATCHES = sys.argv[2].split(',') if len(sys.argv) > 2 else ['side ramp', 'corner ramp', 'back ramp', 'corner curve']
VMIN = float(sys.argv[3]) if len(sys.argv) > 3 else 300.0

def cp(p, a, b, c):
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = ab @ ap, ac @ ap
    if d1 <= 0 and d2 <= 0: return a
    bp = p - b; d3, d4 = ab @ bp, ac @ bp
    if d3 >= 0 and d4 <= d3: return b
    vc = d1 * d4 - d3 * d2
    if vc <= 0 and d1 >= 0 and d3 <= 0: return a + d1 / (d1 - d3) * ab
    cpp = p - c; d5, d6 = ab @ cpp, ac @ cpp
    if d6 >= 0 and d5 <= d6: return c
    vb = d5 * d2 - d1 * d6
    if vb <= 0 and d2 >= 0 and d6 <= 0: return a + d2 / (d2 - d6) * ac
    va = d3 * d6 - d5 * d4
    if va <= 0 and (d4 - d3) >= 0 and (d5 - d6) >= 0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6)); return b + w * (c - b)
    den = 1 / (va + vb + vc); return a + ab * vb * den + ac * vc * den

def touching(x0, r):
    idx = np.where(np.all(lo - r <= x0, axis=1) & np.all(hi + r >= x0, axis=1))[0]
    out = []
    for t in idx:
        q = cp(x0, A[t], B[t], C[t]); d = np.linalg.norm(x0 - q)
        if d < r:
            n = fn[t] if fn[t] @ (x0 - A[t]) > 0 else -fn[t]
            out.append((r - d, int(t), n))
    out.sort(key=lambda z: -z[0]); return out

def avg_of(man):
    if not man: return None
    s = sum(p * n for p, t, n in man[:4]); return s / np.linalg.norm(s)

def circle_normal(x0, t0):
    """Local circle of the patch: the point nearest all facet normal lines near the contact,
    the normal from the centre toward it with the along-axis part removed."""
    lab = labels[t0]
    near = np.where((labels == lab) & (np.linalg.norm(cent - cent[t0], axis=1) < 300))[0]
    ns = np.array([fn[t] if fn[t] @ (x0 - A[t]) > 0 else -fn[t] for t in near])
    if len(near) < 3: return None
    M = np.zeros((3, 3)); b = np.zeros(3)
    for t, n in zip(near, ns):
        P = np.eye(3) - np.outer(n, n); M += P; b += P @ cent[t]
    w, V = np.linalg.eigh(sum(np.outer(n, n) for n in ns))
    axis = V[:, 0]
    P0 = np.linalg.lstsq(M, b, rcond=None)[0]
    d = P0 - x0; d -= (d @ axis) * axis
    return d / np.linalg.norm(d)

def restart(st, dt, n=None, debug=False):
    if n is not None: os.environ['RLFIT_RAMP30_N'] = '%.17g,%.17g,%.17g' % tuple(n)
    if debug:
        f = tempfile.TemporaryFile(); saved = os.dup(2); os.dup2(f.fileno(), 2)
        os.environ['RLFIT_RAMP30_DEBUG'] = '1'
    try:
        o = m.predict(st, H * dt + 1e-9, dt_s=dt)[H, 1:]
    finally:
        os.environ.pop('RLFIT_RAMP30_N', None)
        if debug:
            os.environ.pop('RLFIT_RAMP30_DEBUG', None); os.dup2(saved, 2); os.close(saved)
    if debug:
        f.seek(0); L = [list(map(float, l.split()[1:])) for l in f.read().decode().splitlines() if l.startswith('RAMP30')]
        return o, L
    return o

def err(o, rec): return float(np.linalg.norm(o[3:6] - rec[3:6])), float(np.linalg.norm(o[6:9] - rec[6:9]))

def basis(n):
    a = np.array([1.0, 0, 0]) if abs(n[0]) < 0.9 else np.array([0, 1.0, 0])
    e1 = np.cross(n, a); e1 /= np.linalg.norm(e1); return e1, np.cross(n, e1)

def fit(st, dt, rec, starts, nref):
    e1, e2 = basis(nref)
    nof = lambda p: (nref + p[0] * e1 + p[1] * e2) / np.linalg.norm(nref + p[0] * e1 + p[1] * e2)
    def res(p):
        o = restart(st, dt, nof(p)); return np.concatenate([o[3:6] - rec[3:6], RS * (o[6:9] - rec[6:9])])
    best = None
    for s in starts:
        p0 = np.array([(s - nref) @ e1, (s - nref) @ e2]) / max(s @ nref, 1e-3)
        r = least_squares(res, p0, diff_step=1e-4, x_scale=0.02, max_nfev=100)
        if best is None or r.cost < best.cost: best = r
    return nof(best.x)

ang = lambda a, b: None if a is None or b is None else float(np.degrees(np.arccos(np.clip(a @ b, -1, 1))))
out = open(sys.argv[1], 'w')
for path in sorted(glob.glob(root + '/ball_trajectories/episode_*.csv')):
    ep = int(path[-10:-4])
    e = rlfit.read_recording(path)[0]
    t, x, v, S, dtr = e['t_s'], e['x'], e['v'], e['states'], e['step_dt_s']
    events, rolling = bc.contacts(mesh, x, v, np.diff(t))
    for i, (k, j, patch) in enumerate(events):
        if patch not in PATCHES: continue
        if j > k + 2 or k + H >= len(t): continue
        prev_end = events[i - 1][1] if i > 0 else -10
        nxt = events[i + 1][0] if i + 1 < len(events) else 10**9
        if prev_end >= k - 2 or nxt <= k + H: continue
        if np.any(rolling[max(0, k - 2):k + H + 1]): continue
        dt = dtr[k]; st = S[k]; rec = S[k + H]
        o0, L = restart(st, dt, debug=True)
        hits = [l for l in L if l[12] * l[4] + l[13] * l[5] + l[14] * l[6] < 0]
        if not hits: continue
        h = np.array(hits[0]); x0 = h[0:3]; r = h[11]; ntoday = h[4:7]; ncf = h[7:10]; sv = h[15:18]
        vn = float(sv @ ntoday)
        if -vn < VMIN: continue
        man = touching(x0, r)
        if not man: continue
        deep = man[0][2]
        xprev = x0 - sv * dt
        first = avg_of(touching(xprev, r + 0.3))
        circ = circle_normal(x0, man[0][1])
        cands = dict(feature=ncf, manifold=ntoday, circle=circ, deepest=deep, first=first)
        starts = [ntoday] + [c for c in (circ, deep) if c is not None]
        nfit = fit(st, dt, rec, starts, ntoday)
        errs = {k2: (err(restart(st, dt, c), rec) if c is not None else None) for k2, c in cands.items()}
        errs['today'] = err(o0, rec); errs['fit'] = err(restart(st, dt, nfit), rec)
        nd = len({round(float(z[2] @ np.array([0.3, 0.5, 0.8])), 4) for z in man})
        rec_out = dict(ep=ep, k=int(k), patch=patch, vn=vn, ntri=len(man), nfaces=nd, ticks=len(L),
                       nfit=nfit.tolist(), cands={k2: (None if c is None else c.tolist()) for k2, c in cands.items()},
                       ang={k2: ang(nfit, c) for k2, c in cands.items()}, errs=errs)
        out.write(json.dumps(rec_out) + '\n'); out.flush()
