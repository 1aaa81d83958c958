# goal31 scratch: goal contacts on the tick clock with the model itself (Model.step_ticks,
# Model.ball_contact). Per (episode, contact row): the tick phase a that best fits rows
# c-3..c+4, the first impulse tick, its contacts and their kinds, the model's normal, the
# normal the recorded rows after need (fitted, that tick's law with a free normal), |dv|.
import sys, json, math, numpy as np
from scipy.optimize import least_squares
import rlfit
ROOT = '/work/shared/datasets/lobot'
m = rlfit.Model('ball', data_root=ROOT)
C = dict(zip(m.coefficients['names'], m.coefficients['values']))
R = C['contact_radius']; TICK = 1.0 / 120; G = -650.0; MARGIN = 0.0; SLOP = 1.9
THR = None
tris = np.loadtxt(ROOT + '/meshes/pitch.dat').reshape(-1, 3, 3).astype(np.float32).astype(float)
key = {}
for i, t in enumerate(tris):
    key.setdefault(tuple(np.round(t, 3).ravel()), i)
def file_index(v):
    k = tuple(np.round(v, 3).ravel())
    if k in key: return key[k]
    d = np.abs(tris - v[None]).reshape(len(tris), -1).max(1)
    return int(d.argmin())
def piece(i):
    i1 = i + 1
    for lo, hi, name in ((2, 881, 'corner'), (882, 1761, 'corner'), (1762, 2641, 'corner'), (2642, 3521, 'corner'), (3586, 4089, 'side ramp'), (4092, 6057, 'goal-'), (6058, 8023, 'goal+')):
        if lo <= i1 <= hi: return name
    return 'other'
def kind(c, center):
    V = c['vertices']; p = c['point']
    e0, e1 = V[1] - V[0], V[2] - V[0]
    nf = np.cross(e0, e1); nf /= np.linalg.norm(nf)
    if np.dot(center - p, nf) < 0: nf = -nf
    # barycentric
    d00, d01, d11 = e0 @ e0, e0 @ e1, e1 @ e1
    w = p - V[0]; d20, d21 = w @ e0, w @ e1
    den = d00 * d11 - d01 * d01
    b1 = (d11 * d20 - d01 * d21) / den; b2 = (d00 * d21 - d01 * d20) / den; b0 = 1 - b1 - b2
    b = [b0, b1, b2]
    eps = 1e-5
    zero = [abs(x) < eps for x in b]
    if sum(zero) == 0: return 'face', nf
    if sum(zero) >= 2: return 'vertex', nf
    k = [i for i in range(3) if zero[i]][0]  # edge opposite vertex k: vertices k+1, k+2
    a, bb = (k + 1) % 3, (k + 2) % 3
    edge = {(0, 1): 0, (1, 2): 1, (2, 0): 2, (1, 0): 0, (2, 1): 1, (0, 2): 2}[(a, bb)]
    nb = c['neighbours'][edge]
    if nb < 0: return 'boundary edge', nf
    # neighbour: the other triangle holding both vertices
    A, B = V[a], V[bb]
    cand = np.where((np.isclose(tris, A, atol=1e-3).all(2).any(1)) & (np.isclose(tris, B, atol=1e-3).all(2).any(1)))[0]
    me = file_index(V)
    for j in cand:
        if j == me: continue
        far = [q for q in tris[j] if not (np.allclose(q, A, atol=1e-3) or np.allclose(q, B, atol=1e-3))][0]
        s = np.dot(far - p, nf)
        nj = np.cross(tris[j][1] - tris[j][0], tris[j][2] - tris[j][0]); nj /= np.linalg.norm(nj)
        ang = math.degrees(math.acos(min(1, abs(np.dot(nj, nf)))))
        return ('convex' if s < -1e-3 else 'concave' if s > 1e-3 else 'flat') + ' edge %.0f' % ang, nf
    return 'edge (nb not found)', nf
def law(s, n, depth_pen):
    # StepBallContact's velocity and position for a state s (9,) in contact with normal n.
    x, v, w = s[:3], s[3:6], s[6:9]
    e = math.exp(C['drag'] * TICK)
    v1 = np.array([v[0] * e, v[1] * e, (v[2] + G * TICK) * e])
    vn = v1 @ n
    w2 = w.copy()
    if vn < 0:
        slow = -vn < 15.0
        cr = 0.0 if slow else C['restitution']
        vn0 = v @ n
        tgt = -cr * vn0 if vn0 < 0 else 0.0
        depth = depth_pen - MARGIN
        if depth < 0: tgt = tgt + depth / TICK if (vn * TICK <= depth) else vn
        if tgt > vn:
            dvn = tgt - vn
            slip = v1 - vn * n + 91.25 * np.cross(n, w)
            dpar = np.zeros(3)
            sn = np.linalg.norm(slip)
            if sn > 1e-6:
                lim = C['Y'] * dvn / (1 + C['restitution'])
                sc = lim / sn if lim < sn else 1.0
                dpar = -sc * C['mu'] * slip
            v1 = v1 + dvn * n + dpar
            w2 = w + (C['spin_factor'] / 91.25) * np.cross(dpar, n)
    depth = depth_pen - MARGIN
    push = C['recovery'] * (depth - SLOP) * n if depth > SLOP else 0
    return np.concatenate([x + v1 * TICK + push, v1, w2])
def rows_from(ticks, a, offs):
    out = []
    for o in offs:
        t = a + o; k = int(math.floor(t)); f = t - k
        out.append((1 - f) * ticks[k] + f * ticks[k + 1])
    return np.array(out)
def analyse(ep, c, tag=''):
    e = rlfit.read_recording('%s/ball_trajectories/episode_%06d.csv' % (ROOT, ep), data_root=ROOT)[0]
    S = e['states']; t = e['t_s']
    s0 = c - 3
    rows = list(range(s0, min(c + 6, len(S))))
    offs = [(t[r] - t[s0]) * 120.0 for r in rows]
    nt = int(offs[-1]) + 4
    best = None
    for a in np.linspace(0, 0.975, 40):
        st = S[s0].copy(); st[0:3] -= st[3:6] * a * TICK; st[2] -= 0.5 * G * (a * TICK) ** 2; st[5] -= G * a * TICK
        T = m.step_ticks(st, nt)
        P = rows_from(T, a, offs)
        err = np.linalg.norm(P[:, 0:3] - S[rows, 0:3], axis=1).sum() + np.linalg.norm(P[:, 3:6] - S[rows, 3:6], axis=1).sum() / 120
        if best is None or err < best[0]: best = (err, a, T, st)
    err, a, T, st = best
    P = rows_from(T, a, offs)
    dvrows = np.linalg.norm(P[:, 3:6] - S[rows, 3:6], axis=1)
    # first impulse tick
    out = dict(ep=ep, row=c, tag=tag, a=round(float(a), 3), dv_rows=[round(float(x), 1) for x in dvrows])
    for k in range(nt):
        bc = m.ball_contact(T[k, :3])
        if not bc['hit']: continue
        n = bc['normal']
        e_ = math.exp(C['drag'] * TICK)
        v1 = np.array([T[k, 3] * e_, T[k, 4] * e_, (T[k, 5] + G * TICK) * e_])
        if v1 @ n >= 0: continue
        kinds = []
        for cc in bc['contacts']:
            kd, nf = kind(cc, T[k, :3])
            fi = file_index(cc['vertices'])
            kinds.append('%d %s %s d%.2f adj-face %.1fdeg' % (fi + 1, piece(fi), kd, cc['depth'], math.degrees(math.acos(min(1, abs(cc['adjusted'] @ nf))))))
        # fit the normal at this tick to the rows after it
        after = [i for i, o in enumerate(offs) if a + o > k + 1 and i < len(rows)]
        def resid(p):
            th, ph = p
            nn = np.array([math.sin(th) * math.cos(ph), math.sin(th) * math.sin(ph), math.cos(th)])
            s1 = law(T[k], nn, bc['depth'])
            T2 = np.vstack([T[:k + 1], m.step_ticks(s1, nt - k - 1)])
            P2 = rows_from(T2, a, [offs[i] for i in after])
            Sr = S[[rows[i] for i in after]]
            return np.concatenate([(P2[:, 3:6] - Sr[:, 3:6]).ravel(), (P2[:, 0:3] - Sr[:, 0:3]).ravel() * 10])
        th0 = math.acos(max(-1, min(1, n[2]))); ph0 = math.atan2(n[1], n[0])
        r0 = resid([th0, ph0])
        try:
            fit = least_squares(resid, [th0, ph0], diff_step=1e-4)
            th, ph = fit.x
            nfit = np.array([math.sin(th) * math.cos(ph), math.sin(th) * math.sin(ph), math.cos(th)])
            rf = fit.fun
        except Exception as ex:
            nfit = n; rf = r0
        # law check: the model's own law reproduces the model's next tick?
        lawchk = float(np.linalg.norm(law(T[k], n, bc['depth'])[3:6] - T[k + 1, 3:6]))
        dvtick = float(np.linalg.norm(law(T[k], n, bc['depth'])[3:6] - law(T[k], nfit, bc['depth'])[3:6]))
        ang = math.degrees(math.acos(min(1, n @ nfit)))
        rv0 = np.abs(r0[:len(after) * 3]).reshape(-1, 3); rvf = np.abs(rf[:len(after) * 3]).reshape(-1, 3)
        out.update(tick=k, tick_row_offset=round(k - a, 2), vn=round(float(v1 @ n), 1), speed=round(float(np.linalg.norm(v1)), 1),
                   collide_tris=bc['triangles'], contacts=kinds, n_model=[round(x, 3) for x in n], n_fit=[round(float(x), 3) for x in nfit],
                   angle=round(ang, 2), dv_tick=round(dvtick, 1), resid_model=round(float(np.linalg.norm(rv0, axis=1).max()), 1),
                   resid_fit=round(float(np.linalg.norm(rvf, axis=1).max()), 1), lawchk=round(lawchk, 3))
        break
    return out
if __name__ == '__main__':
    for arg in sys.argv[1:]:
        ep, c = map(int, arg.split('@')[:2])
        print(json.dumps(analyse(ep, c, arg)), flush=True)
