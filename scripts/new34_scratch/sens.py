# new34 scratch: the six episodes that went up. The open loop's own state at c - 3 (folds-4
# output) injected into a restart at the replay's phase, and the arrival error scaled by s
# (recorded + s (open loop - recorded)): the smallest s that departs (|dv| c + 8 > 20 uu/s).
# For the slow-bounce phase's episodes the old phase (half a tick) too: born test and open loop.
import sys, csv, json, math, numpy as np, tk, born
for ep, c in [(140, 135), (237, 151), (180, 222), (188, 149), (200, 283), (129, 256)]:
    tk.use_fold(ep); e = tk.load(ep); S = e['states'].copy(); N = len(S) - 1
    o, how = tk.origin(e); s0 = c - 3; r8 = c + 8
    rows = list(csv.reader(open('%s/episode_%06d.csv' % (born.OUT, ep))))[1:]
    ol = np.array([float(x) for x in rows[s0][4:13]])
    rec = S[s0].copy(); res = []
    for s in [0, 0.1, 0.25, 0.5, 0.75, 1.0]:
        e2 = dict(e); S2 = S.copy(); S2[s0] = rec + s * (ol - rec); e2['states'] = S2
        P, _, _, _ = tk.rollout(e2, o, s0, r8)
        res.append('%.2f:%.1f' % (s, np.linalg.norm(P[-1, 3:6] - S[r8, 3:6])))
    line = dict(ep=ep, c=c, how=how, dx_in=round(float(np.linalg.norm(ol[:3] - rec[:3])), 2), dv_in=round(float(np.linalg.norm(ol[3:6] - rec[3:6])), 2), scaled=' '.join(res))
    if how.startswith('tier1') or how.startswith('tier2'):
        oh = 0.5 / tk.TPR
        P, _, a_old, _ = tk.rollout(e, oh, s0, r8)
        Pl, _, _, _ = tk.rollout(e, oh, 0, N)
        line.update(a_old=round(a_old, 3), a_new=round(tk.frac(o, sum(tk.clock_rows(e)[:s0])), 3), dv8_old=round(float(np.linalg.norm(P[-1, 3:6] - S[r8, 3:6])), 1),
                    last_old_phase=round(float(np.linalg.norm(Pl[-1, :3] - S[N, :3])), 1), dx_in_old_phase=round(float(np.linalg.norm(Pl[s0, :3] - S[s0, :3])), 2))
    print(json.dumps(line), flush=True)
