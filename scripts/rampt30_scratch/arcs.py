# Scratch (rampt30): fast isolated side/corner ramp bounces on the tick clock, bounce by bounce.
# Incoming and outgoing free arcs fitted as 3D tick states (flat_bounces.py's clock and blend),
# contact tick inferred, facets and depths there, dv in the deepest facet's frame, effective
# normal fitted under the model's impulse law, and candidate rules compared.
import sys, os, json, glob, math, numpy as np
sys.path.insert(0, '/work/wt/rampt30/scripts')
import rlfit, mesh_patches, ball_classes as bc, flat_bounces as fb
from scipy.optimize import least_squares

root = '/work/shared/datasets/lobot'
tris = mesh_patches.read_triangles(os.path.join(root, 'meshes', 'pitch.dat'))
mesh = mesh_patches.Mesh(tris)
labels = np.array(mesh.labels)
A, B, C = tris[:, 0], tris[:, 1], tris[:, 2]
fn = np.cross(B - A, C - A); fn /= np.linalg.norm(fn, axis=1)[:, None]
lo, hi = tris.min(axis=1), tris.max(axis=1)
co = json.load(open('/work/main/results/ball/coeffs.json'))['coefficients']
R = co['contact_radius']; DRAG = co['drag']; CR = co['restitution']; MU = co['mu']; Y = co['Y']
SF = co['spin_factor']; REC = co['recovery']; RB = 91.25; SLOP = 1.9
G = np.array([0, 0, -650.0]); DT = 1 / 120.0; EDR = math.exp(DRAG * DT)
PATCHES = ['side ramp', 'corner ramp']
VMIN = 300.0; TOL = 0.05


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


def touching(x0, r=R):
    """[(depth, tri, face normal toward x0, closest-feature unit)] deepest first."""
    idx = np.where(np.all(lo - r <= x0, axis=1) & np.all(hi + r >= x0, axis=1))[0]
    out = []
    for t in idx:
        q = cp(x0, A[t], B[t], C[t]); d = np.linalg.norm(x0 - q)
        if d < r:
            n = fn[t] if fn[t] @ (x0 - A[t]) > 0 else -fn[t]
            out.append((r - d, int(t), n, (x0 - q) / d))
    out.sort(key=lambda z: -z[0]); return out


def unit(a): return a / np.linalg.norm(a)


def free(x, v):
    v = (v + G * DT) * EDR; return x + v * DT, v


def back(x, v):
    return x - v * DT, v / EDR - G * DT


def state_at(x, v, jf, jt):
    for _ in range(max(0, jt - jf)): x, v = free(x, v)
    for _ in range(max(0, jf - jt)): x, v = back(x, v)
    return x, v


def fit_arc(rows, tau, X, V, jref):
    """3D tick state (x, v) at tick jref whose free ticks blend to the rows; largest residual."""
    m, y = [], []
    for r in rows:
        j = math.floor(tau[r]); a = tau[r] - j
        def blend(x, v):
            s0 = state_at(x, v, jref, j); s1 = state_at(x, v, jref, j + 1)
            return np.concatenate([(1 - a) * s0[0] + a * s1[0], (1 - a) * s0[1] + a * s1[1]])
        b = blend(np.zeros(3), np.zeros(3))
        cols = []
        for i in range(6):
            e = np.zeros(6); e[i] = 1
            cols.append(blend(e[:3], e[3:]) - b)
        M = np.column_stack(cols)
        sc = np.array([1, 1, 1, 1 / 120, 1 / 120, 1 / 120])
        m += list(M * sc[:, None]); y += list((np.concatenate([X[r], V[r]]) - b) * sc)
    m, y = np.array(m), np.array(y)
    sol, *_ = np.linalg.lstsq(m, y, rcond=None)
    return sol[:3], sol[3:], float(np.abs(y - m @ sol).max())


def impulse(v, omega, n):
    """The model's contact step at a tick with velocity v (pre-gravity) and normal n: v2."""
    v1 = (v + G * DT) * EDR
    vn = v1 @ n; vn0 = v @ n
    if vn >= 0: return v1, omega
    tgt = -CR * vn0 if vn0 < 0 else 0.0
    if tgt <= vn: return v1, omega
    dvn = tgt - vn
    slip = v1 - vn * n + RB * np.cross(n, omega)
    dvp = np.zeros(3); s = np.linalg.norm(slip)
    if s > 1e-6:
        lim = Y * dvn / (1 + CR); sc = lim / s if lim < s else 1.0
        dvp = -sc * MU * slip
    return v1 + dvn * n + dvp, omega + SF / RB * np.cross(dvp, n)


def basis(n):
    a = np.array([1.0, 0, 0]) if abs(n[0]) < 0.9 else np.array([0, 1.0, 0])
    e1 = unit(np.cross(n, a)); return e1, np.cross(n, e1)


def fit_normal(v, omega, target, nref):
    e1, e2 = basis(nref)
    nof = lambda p: unit(nref + p[0] * e1 + p[1] * e2)
    r = least_squares(lambda p: impulse(v, omega, nof(p))[0] - target, [0.0, 0.0], x_scale=0.02)
    return nof(r.x), float(np.linalg.norm(r.fun))


def side_circle(x):
    cx = math.copysign(3839.9, x[0]); d = np.array([cx - x[0], 0.0, 256.2 - x[2]])
    return unit(d)


ang = lambda a, b: float(np.degrees(np.arccos(np.clip(a @ b, -1, 1))))
out = open(sys.argv[1], 'w')
stats = dict(events=0, fit_bad=0, no_contact=0, slow=0, kept=0)
for path in sorted(glob.glob(root + '/ball_trajectories/episode_*.csv')):
    ep = int(path[-10:-4])
    X, V, crow = fb.load(path)
    W = np.loadtxt(path, delimiter=',', ndmin=2)[:, 10:13]
    jump = fb.jumps(X, V, crow, DRAG)
    origin = fb.clock_origin(jump, crow)
    if origin is None: continue
    tau = (origin + np.concatenate([[0], np.cumsum(crow)])) * fb.TICKS_PER_ROW
    t = np.concatenate([[0], np.cumsum(crow)]) / fb.ROW_HZ
    events, rolling = bc.contacts(mesh, X, V, np.diff(t))
    for i, (k, j, patch) in enumerate(events):
        if patch not in PATCHES or j > k + 2 or k - 3 < 0 or j + 4 >= len(X): continue
        prev_end = events[i - 1][1] if i > 0 else -10
        nxt = events[i + 1][0] if i + 1 < len(events) else 10**9
        if prev_end >= k - 2 or nxt <= j + 4: continue
        if np.any(rolling[k - 3:j + 5]) or np.any(crow[k - 3:j + 4] != 1): continue
        stats['events'] += 1
        jin = math.floor(tau[k]); jout = math.floor(tau[j + 1])
        best_in = None
        for rows in (range(k - 3, k + 1), range(k - 3, k)):
            xi, vi, ri = fit_arc(rows, tau, X, V, jin)
            if ri <= TOL: best_in = (xi, vi, ri, len(rows)); break
        best_out = None
        for rows in (range(j + 1, j + 4), range(j + 2, j + 5)):
            xo, vo, ro = fit_arc(rows, tau, X, V, jout)
            if ro <= TOL: best_out = (xo, vo, ro, len(rows)); break
        if best_in is None or best_out is None:
            stats['fit_bad'] += 1; continue
        xi, vi = best_in[:2]; xo, vo = best_out[:2]
        om = W[k]  # free flight keeps omega
        # first tick (from jin - 2) whose start centre penetrates a facet of R
        c = jin - 2; xc, vc = state_at(xi, vi, jin, c)
        while c < jout + 1 and not touching(xc): xc, vc = free(xc, vc); c += 1
        if c >= jout + 1: stats['no_contact'] += 1; continue
        man = touching(xc)
        nd = man[0][2]
        v1 = (vc + G * DT) * EDR
        if -(v1 @ nd) < VMIN: stats['slow'] += 1; continue
        # game: outgoing arc at ticks c-1 .. c+2, and its position mismatch per candidate tick
        res = {}
        for cc in (c - 1, c, c + 1):
            xa, va = state_at(xi, vi, jin, cc)
            xb, vb = state_at(xo, vo, jout, cc + 1)
            mis = xb - xa - vb * DT  # = push along n if the contact was at tick cc
            res[cc] = dict(mis_n=float(mis @ nd), mis_t=float(np.linalg.norm(mis - (mis @ nd) * nd)),
                           depth=(touching(xa)[0][0] if touching(xa) else -1.0))
        xo1, vo1 = state_at(xo, vo, jout, c + 1)
        xo2, vo2 = state_at(xo, vo, jout, c + 2)
        dv = vo1 - v1
        dvn = float(dv @ nd); dvt = float(np.linalg.norm(dv - dvn * nd))
        nfit, fres = fit_normal(vc, om, vo1, nd)
        # candidates at tick c
        wavg = unit(sum(p * n for p, _, n, _ in man))
        feat = man[0][3]
        cand = dict(deepest=nd, wavg=wavg, feature=feat)
        coll = rlfit.Arena().collide(xc, R) if False else None
        if patch == 'side ramp': cand['circle'] = side_circle(xc)
        cand['wavg_cf'] = unit(sum(p * f for p, _, _, f in man))
        faces = {}
        for p, tt, n, f in man: faces.setdefault(tuple(np.round(n, 5)), [n, 0.0]); faces[tuple(np.round(n, 5))][1] += p
        cand['eq_faces'] = unit(sum(n for n, p in faces.values()))
        cand['w2'] = unit(sum(p * p * n for p, _, n, _ in man))
        ws = [(max(0.0, p - SLOP), n) for p, _, n, _ in man]
        cand['wslop'] = unit(sum(w * n for w, n in ws)) if sum(w for w, _ in ws) > 0 else nd
        mm = touching(xc - v1 * DT / 2)
        cand['mid'] = unit(sum(p * n for p, _, n, _ in mm)) if mm else nd
        mr = touching(xc, RB)
        cand['wavg_rb'] = unit(sum(p * n for p, _, n, _ in mr)) if mr else nd
        intr = [n for _, _, n, f in man if f @ n > 0.99999]
        cand['eq_int'] = unit(sum(intr)) if intr else unit(sum(n for _, _, n, _ in man))
        cand['nint'] = None
        cand.pop('nint')
        cand['wavg4'] = unit(sum(p * n for p, _, n, _ in man[:4]))
        cand['eq_tris'] = unit(sum(n for _, _, n, _ in man))
        cand['eq_tris4'] = unit(sum(n for _, _, n, _ in man[:4]))
        cand['eq_cf4'] = unit(sum(f for _, _, _, f in man[:4]))
        cand['eq_cf'] = unit(sum(f for _, _, _, f in man))
        for M in (0.5, 1.0, 2.0, 5.0):
            pts = []
            for p, tt, n, f in man:
                q = xc - f * (R - p)
                if all(np.linalg.norm(q - q2) > M for q2, _ in pts): pts.append((q, n))
            cand['pts%g' % M] = unit(sum(n for _, n in pts))
            cand['pts%g_4' % M] = unit(sum(n for _, n in pts[:4]))
        for dr in (-2, -1, -0.5, -0.2, 0.2, 0.5, 1, 2):
            mr2 = touching(xc, R + dr)
            cand['eqR%+g' % dr] = unit(sum(n for _, _, n, _ in mr2)) if mr2 else nd
        for sft in (-0.5, 0.5, 1.0):
            mr2 = touching(xc + sft * v1 * DT)
            cand['eqS%+g' % sft] = unit(sum(n for _, _, n, _ in mr2)) if mr2 else nd
        N = np.array([n for n, p in faces.values()]).T
        from scipy.optimize import nnls
        wc, _ = nnls(N, nfit)
        cone = unit(N @ wc) if wc.sum() > 0 else nd
        rec_cone = ang(cone, nfit)
        rec_w = [float(w) for w in wc]; rec_p = [float(p) for n, p in faces.values()]
        # facets after the push (end of tick, with the deepest normal's push)
        pushd = REC * max(0.0, man[0][0] - SLOP)
        xend = xc + impulse(vc, om, nd)[0] * DT + pushd * nd
        me = touching(xend)
        if me: cand['after'] = unit(sum(p * n for p, _, n, _ in me))
        err = {kk: float(np.linalg.norm(impulse(vc, om, n)[0] - vo1)) for kk, n in cand.items()}
        # contact one tick earlier (impulse at c-1 with its closest normal to the c-1 centre) and later
        xe, ve = state_at(xi, vi, jin, c - 1)
        v2e = impulse(ve, om, wavg)[0]
        xe2, ve2 = xe + v2e * DT, (v2e + G * DT) * EDR  # free tick c
        err['tick-1'] = float(np.linalg.norm(ve2 - vo1))
        xl, vl = state_at(xi, vi, jin, c + 1)
        ml = touching(xl)
        nl = unit(sum(p * n for p, _, n, _ in ml)) if ml else wavg
        vl2 = impulse(vl, om, nl)[0]
        err['tick+1'] = float(np.linalg.norm(vl2 - vo2))
        rec = dict(ep=ep, k=int(k), j=int(j), patch=patch, c=int(c), jin=jin, jout=jout,
                   vn=float(v1 @ nd), speed=float(np.linalg.norm(v1)), rin=best_in[2], rout=best_out[2],
                   nin=best_in[3], nout=best_out[3],
                   ntri=len(man), nint=len(intr), tri_p=[float(z[0]) for z in man], tri_face=[int(np.argmin([np.linalg.norm(z[2]-np.array(fk)) for fk in faces])) for z in man], cone=rec_cone, cone_w=rec_w, face_p=rec_p, nfaces=len({round(float(z[2] @ np.array([0.3, 0.5, 0.8])), 5) for z in man}),
                   depths=[float(z[0]) for z in man[:4]], res={str(a - c): b for a, b in res.items()},
                   dvn=dvn, dvt=dvt, e=float((vo1 @ nd) / -(vc @ nd)),
                   e_fit=float((vo1 @ nfit) / -(vc @ nfit)),
                   nfit=nfit.tolist(), fit_res=fres,
                   ang={kk: ang(nfit, n) for kk, n in cand.items()}, err=err)
        stats['kept'] += 1
        out.write(json.dumps(rec) + '\n'); out.flush()
print(stats)
