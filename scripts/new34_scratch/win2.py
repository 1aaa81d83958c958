# new34 scratch: every windowed restart (0.5 s, results/ball) whose start row's tick pair touches
# the mesh while the row before's pair is free and the recorded step into the start row is NOT
# free flight (a row holding a fraction of a contact; BallStartTicks keeps the row's own pair):
# |dx| 0.5 s on from the row's own pair (today) and from the row before's pair (candidate).
import sys, glob, json, math, numpy as np, tk
from win import row_at
tk.use_fold(0, None)
out = []
for ep in tk.EPS:
    e = tk.load(ep); S = e['states']; t = e['t_s']; N = len(S) - 1; o, how = tk.origin(e); cr = tk.clock_rows(e)
    J = tk.jumps(e); w = 0
    while True:
        st = row_at(t, 0, w * 0.5)
        if st < 0 or (w > 0 and st <= 0) or st >= N: break
        w += 1
        r = row_at(t, st, 0.5)
        if r < 0 or st == 0: continue
        a = tk.frac(o, sum(cr[:st])); t0, t1 = tk.pair(S[st], a)
        if not (tk.m.ball_contact(t0[:3])['hit'] or tk.m.ball_contact(t1[:3])['hit']): continue
        if np.linalg.norm(J[st - 1]) <= 5.0: continue
        ab = tk.frac(o, sum(cr[:st - 1])); b0, b1 = tk.pair(S[st - 1], ab)
        if tk.m.ball_contact(b0[:3])['hit'] or tk.m.ball_contact(b1[:3])['hit']: continue
        P, _, _, _ = tk.rollout(e, o, st, r, rule=False)
        offs = [sum(cr[st - 1:k]) * tk.TPR for k in range(st, r + 1)]
        T = tk.m.step_ticks(b0, int(ab + offs[-1]) + 3)
        k = int(ab + offs[-1]); f = ab + offs[-1] - k; Q = (1 - f) * T[k] + f * T[k + 1]
        out.append(dict(ep=ep, start=st, jump_in=round(float(np.linalg.norm(J[st - 1])), 0), jump_out=round(float(np.linalg.norm(J[st])), 0),
                        today=round(float(np.linalg.norm(P[-1, :3] - S[r, :3])), 2), cand=round(float(np.linalg.norm(Q[:3] - S[r, :3])), 2)))
json.dump(out, open('win2.json', 'w'))
A = np.array([[d['today'], d['cand']] for d in out])
print(len(out), 'restarts; today median/p90/max', np.median(A[:, 0]), np.percentile(A[:, 0], 90), A[:, 0].max(),
      '; candidate', np.median(A[:, 1]), np.percentile(A[:, 1], 90), A[:, 1].max(), '; better', int((A[:, 1] < A[:, 0] - 0.01).sum()), 'worse', int((A[:, 1] > A[:, 0] + 0.01).sum()))
for d in sorted(out, key=lambda d: -max(d['today'], d['cand']))[:15]: print(d)
