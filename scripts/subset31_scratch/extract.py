# Scratch (subset31): rampt30's per-bounce tick-clock fit (arcs.py) over every curved patch;
# writes one pickle record per kept bounce with the raw states and the facets near the centre.
import pickle
from common import *
FLAT = {'floor', 'side wall', 'back wall', 'ceiling', 'none'}
recs = []; stats = dict(events=0, fit_bad=0, no_contact=0, slow=0, kept=0)
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
        if patch in FLAT or j > k + 2 or k - 3 < 0 or j + 4 >= len(X): continue
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
        om = W[k]
        c = jin - 2; xc, vc = state_at(xi, vi, jin, c)
        while c < jout + 1 and not touching(xc): xc, vc = free(xc, vc); c += 1
        if c >= jout + 1: stats['no_contact'] += 1; continue
        man = touching(xc); nd = man[0][2]
        v1 = (vc + G * DT) * EDR
        if -(v1 @ nd) < VMIN: stats['slow'] += 1; continue
        xo1, vo1 = state_at(xo, vo, jout, c + 1)
        nfit, fres = fit_normal(vc, om, vo1, nd)
        xp, vp = state_at(xi, vi, jin, c - 1)
        recs.append(dict(ep=ep, k=int(k), j=int(j), patch=patch, c=int(c), xc=xc, vc=vc, om=om, vo1=vo1,
                         nfit=nfit, fit_res=fres, vn=float(v1 @ nd), near=near(xc, R + 3.0),
                         xp=xp, near_prev=near(xp, R + 3.0)))
        stats['kept'] += 1
    print(ep, stats, flush=True)
pickle.dump(recs, open('/tmp/subset31/bounces.pkl', 'wb'))
print(stats)
