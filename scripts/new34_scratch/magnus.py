# new34 scratch: is there a force across the velocity in free flight? Per recorded free step
# (|residual| < 5 uu/s, both rows 200 uu clear of the mesh), the horizontal residual (uu/s,
# gravity then drag as BallFreeFlightResidual) against (omega x v) dt, by least squares; per
# episode and pooled.
import numpy as np, tk, glob
tk.use_fold(0, None)
X = []; Y = []; per = []
for ep in tk.EPS:
    e = tk.load(ep); S = e['states']; dt = e['step_dt_s']; J = tk.jumps(e)
    xs = []; ys = []
    for k in range(len(S) - 1):
        if np.linalg.norm(J[k]) > 5: continue
        if tk.m.ball_contact(S[k, :3])['hit']: continue
        d = tk.m.ball_contact(S[k, :3]); 
        w = S[k, 6:9]; v = S[k, 3:6]; f = np.cross(w, v) * dt[k]
        xs.append(f[:2]); ys.append(J[k][:2])
    if len(xs) < 50: continue
    xs = np.array(xs).ravel(); ys = np.array(ys).ravel()
    c = float(xs @ ys / (xs @ xs)); per.append(c); X.append(xs); Y.append(ys)
X = np.concatenate(X); Y = np.concatenate(Y); c = float(X @ Y / (X @ X))
r = Y - c * X
print('pooled coefficient %.3e (1/uu)' % c, 'residual sd before %.4f after %.4f' % (Y.std(), r.std()), 'episodes', len(per),
      'per-episode median %.3e p10 %.3e p90 %.3e, positive %d' % (np.median(per), np.percentile(per, 10), np.percentile(per, 90), sum(p > 0 for p in per)))
