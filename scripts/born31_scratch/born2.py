# born31 scratch: each departing contact of tail31's episodes restarted from the recorded row
# c - 3 at the replay's own clock phase (goal31's phase.origin) and at 100 phases; the contact
# the model sees at the replay's phase, the normal the rows after need; the restart from the
# recorded state after the contact (or before it) to the last row.
import sys, math, json, numpy as np
sys.path.insert(0, '/tmp/born31/g')  # goal.py, phase.py: goal31's, copied beside
import goal, phase
m = goal.m; TICK = goal.TICK; G = goal.G; TPR = 120.0 / 61.0
def tickstate(S, r, a):
    # the tick before row r whose blend with the next tick (model step) at a is the row (fixed point)
    st = S[r].copy(); st[0:3] -= st[3:6] * a * TICK; st[2] -= 0.5 * G * (a * TICK) ** 2; st[5] -= G * a * TICK
    for _ in range(8):
        t1 = m.step_ticks(st, 1)[1]; st = S[r] - a * (t1 - st)
    return st
def restart(S, cr, r0, a, r1):
    rows = list(range(r0, r1 + 1)); offs = [sum(cr[r0:r]) * TPR for r in rows]
    T = m.step_ticks(tickstate(S, r0, a), int(offs[-1]) + 4)
    return rows, goal.rows_from(T, a, offs), T, offs
def arep(o, cr, r):
    t = (o + sum(cr[:r])) * TPR; return t - math.floor(t)
def contact_info(S, cr, c, a):
    s0 = c - 3; r1 = min(c + 8, len(S) - 1)
    rows, P, T, offs = restart(S, cr, s0, a, r1)
    e_ = math.exp(goal.C['drag'] * TICK)
    for k in range(len(T) - 1):
        bc = m.ball_contact(T[k, :3])
        if not bc['hit']: continue
        n = np.array(bc['normal']); v1 = np.array([T[k, 3] * e_, T[k, 4] * e_, (T[k, 5] + G * TICK) * e_])
        if v1 @ n >= 0: continue
        after = [i for i, o in enumerate(offs) if a + o > k + 1]
        from scipy.optimize import least_squares
        def resid(p):
            th, ph = p
            nn = np.array([math.sin(th) * math.cos(ph), math.sin(th) * math.sin(ph), math.cos(th)])
            s1 = goal.law(T[k], nn, bc['depth'])
            T2 = np.vstack([T[:k + 1], m.step_ticks(s1, len(T) - k - 2)])
            P2 = goal.rows_from(T2, a, [offs[i] for i in after]); Sr = S[[rows[i] for i in after]]
            return np.concatenate([(P2[:, 3:6] - Sr[:, 3:6]).ravel(), (P2[:, 0:3] - Sr[:, 0:3]).ravel() * 10])
        th0 = math.acos(max(-1, min(1, n[2]))); ph0 = math.atan2(n[1], n[0])
        r0 = resid([th0, ph0]); fit = least_squares(resid, [th0, ph0], diff_step=1e-4)
        th, ph = fit.x; nf = np.array([math.sin(th) * math.cos(ph), math.sin(th) * math.sin(ph), math.cos(th)])
        kinds = []
        for cc in bc['contacts']:
            kd, _ = goal.kind(cc, T[k, :3]); fi = goal.file_index(cc['vertices'])
            kinds.append('%d %s %s d%.2f' % (fi + 1, goal.piece(fi), kd, cc['depth']))
        rv0 = np.linalg.norm(np.abs(r0[:len(after) * 3]).reshape(-1, 3), axis=1).max()
        rvf = np.linalg.norm(np.abs(fit.fun[:len(after) * 3]).reshape(-1, 3), axis=1).max()
        return dict(tick=k, vn=round(float(v1 @ n), 1), speed=round(float(np.linalg.norm(v1)), 1), collide=bc['triangles'],
                    manifold=len(bc['contacts']), kinds=kinds, angle=round(math.degrees(math.acos(min(1, float(n @ nf)))), 2),
                    resid_model=round(float(rv0), 1), resid_fit=round(float(rvf), 1), n_model=[round(float(x), 3) for x in n], n_fit=[round(float(x), 3) for x in nf])
    return None
def run(ep, c, info=True):
    e = goal.rlfit.read_recording('%s/ball_trajectories/episode_%06d.csv' % (goal.ROOT, ep))[0]
    S = e['states']; cr = [int(round(d * 60.96)) for d in e['step_dt_s']]; N = len(S) - 1
    o, cnt = phase.origin(e); s0 = c - 3; a0 = arep(o, cr, s0); r1 = min(c + 8, N)
    res = []
    for a in list(np.linspace(0, 0.99, 100)) + [a0]:
        rows, P, T, offs = restart(S, cr, s0, a, r1)
        dv = np.linalg.norm(P[:, 3:6] - S[rows, 3:6], axis=1); res.append((a, float(dv[-1]), float(dv.max())))
    arr = np.array(res[:100]); at = res[100]
    good = arr[arr[:, 1] < 5, 0]
    dist = None if len(good) == 0 else float(min(min(abs(g - a0), 1 - abs(g - a0)) for g in good))
    # 1 s on and the last row from c - 3 at the replay's phase; the last row from c + 4 (after the contact)
    rows, P, _, _ = restart(S, cr, s0, a0, N)
    dx = np.linalg.norm(P[:, 0:3] - S[rows, 0:3], axis=1)
    ca = min(c + 4, N); a4 = arep(o, cr, ca)
    rows4, P4, _, _ = restart(S, cr, ca, a4, N)
    dx4 = np.linalg.norm(P4[:, 0:3] - S[rows4, 0:3], axis=1)
    out = dict(ep=ep, c=c, straddled=cnt, clock_origin_file=float(e['clock_origin_rows']), a_rep=round(a0, 3),
               dv8_rep=round(at[1], 1), dvmax_rep=round(at[2], 1), n_good=int(len(good)),
               band=('%.2f-%.2f' % (good.min(), good.max())) if len(good) else 'none', dist=None if dist is None else round(dist, 2),
               best=round(float(arr[:, 1].min()), 1), best_a=round(float(arr[np.argmin(arr[:, 1]), 0]), 2), med=round(float(np.median(arr[:, 1])), 1),
               dx1s_rep=round(float(dx[min(61, len(dx) - 1)]), 1), dxlast_from_cm3=round(float(dx[-1]), 1), dxlast_from_cp4=round(float(dx4[-1]), 1),
               dxmax_from_cp4=round(float(dx4.max()), 1))
    if info: out['contact'] = contact_info(S, cr, c, a0)
    return out
if __name__ == '__main__':
    info = '--noinfo' not in sys.argv
    for arg in sys.argv[1:]:
        if arg.startswith('--'): continue
        ep, c = map(int, arg.split('@'))
        print(json.dumps(run(ep, c, info)), flush=True)
