# new34 scratch: the windowed restarts (every 0.5 s, RowAtHorizon) of the episodes with the
# largest windowed 0.5 s maxima, results/ball, with tk's copy of the replay's start: |dx| and
# |dv| 0.5 s on per restart, the worst restart's row, and what the recorded steps do there.
import sys, json, math, numpy as np, tk
def row_at(t, start, h):
    target = t[start] + h
    k = int(np.searchsorted(t, target, side='left'))
    if k >= len(t):
        last = len(t) - 1; return last if t[last] + 0.5 * (t[last] - t[last - 1]) >= target else -1
    if k > start and target - t[k - 1] < t[k] - target: k -= 1
    return k
if __name__ == "__main__":
    tk.use_fold(0, None)
    allr = []
    for ep in [int(a) for a in sys.argv[1:]]:
        e = tk.load(ep); S = e['states']; t = e['t_s']; N = len(S) - 1; o, how = tk.origin(e)
        J = [float(np.linalg.norm(j)) for j in tk.jumps(e)]
        w = 0
        while True:
            st = row_at(t, 0, w * 0.5)
            if st < 0 or (w > 0 and st <= 0) or st >= N: break
            w += 1
            r = row_at(t, st, 0.5)
            if r < 0: continue
            P, T, a0, rs = tk.rollout(e, o, st, r)
            P0, _, _, _ = tk.rollout(e, o, st, r, rule=False)
            dx = float(np.linalg.norm(P[-1, :3] - S[r, :3])); dv = float(np.linalg.norm(P[-1, 3:6] - S[r, 3:6]))
            allr.append(dict(ep=ep, start=st, how=how, a=round(a0, 3), from_row=rs, dx05=round(dx, 1), dv05=round(dv, 1),
                             dx05_norule=round(float(np.linalg.norm(P0[-1, :3] - S[r, :3])), 1),
                             z=round(float(S[st, 2]), 1), vz=round(float(S[st, 5]), 1), jumps=[round(J[k], 1) for k in range(max(st - 3, 0), min(st + 4, N))]))
    allr.sort(key=lambda d: -d['dx05'])
    for d in allr[:int(sys.argv[0] and 15)]: print(json.dumps(d))
