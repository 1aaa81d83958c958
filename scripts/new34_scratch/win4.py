# new34 scratch: every windowed restart (0.5 s, results/ball) whose start row's pair is free
# while the recorded steps into and out of the row are both off free flight (> 5 uu/s: the row
# holds a fraction of a contact) and the row before's pair is free: |dx| 0.5 s on from the
# row's own pair (today) and from the row before's pair (candidate).
import json, numpy as np, tk
from win import row_at
from win3 import free_pair, from_row
tk.use_fold(0, None)
out = []
for ep in tk.EPS:
    e = tk.load(ep); S = e['states']; t = e['t_s']; N = len(S) - 1; o, how = tk.origin(e)
    J = tk.jumps(e); w = 0
    while True:
        st = row_at(t, 0, w * 0.5)
        if st < 0 or (w > 0 and st <= 0) or st >= N: break
        w += 1
        r = row_at(t, st, 0.5)
        if r < 0 or st == 0: continue
        if np.linalg.norm(J[st - 1]) <= 5 or np.linalg.norm(J[st]) <= 5: continue
        if not free_pair(e, o, st)[0] or not free_pair(e, o, st - 1)[0]: continue
        P, _, _, _ = tk.rollout(e, o, st, r, rule=False)
        out.append(dict(ep=ep, start=st, j_in=round(float(np.linalg.norm(J[st - 1]))), j_out=round(float(np.linalg.norm(J[st]))),
                        today=round(float(np.linalg.norm(P[-1, :3] - S[r, :3])), 2), cand=round(float(np.linalg.norm(from_row(e, o, st - 1, r)[:3] - S[r, :3])), 2)))
A = np.array([[d['today'], d['cand']] for d in out])
print(len(out), 'today median %.3f p90 %.2f max %.1f' % (np.median(A[:, 0]), np.percentile(A[:, 0], 90), A[:, 0].max()), 'cand median %.3f p90 %.2f max %.1f' % (np.median(A[:, 1]), np.percentile(A[:, 1], 90), A[:, 1].max()),
      'better', int((A[:, 1] < A[:, 0] - 0.01).sum()), 'worse', int((A[:, 1] > A[:, 0] + 0.01).sum()))
for d in sorted(out, key=lambda d: -max(d['today'], d['cand'])): print(d)
