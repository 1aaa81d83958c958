import sys, math, numpy as np
import born2 as born
for arg in sys.argv[1:]:
    ep, c = map(int, arg.split('@'))
    e = born.goal.rlfit.read_recording('%s/ball_trajectories/episode_%06d.csv' % (born.goal.ROOT, ep))[0]
    S = e['states']; cr = [int(round(d * 60.96)) for d in e['step_dt_s']]
    o, cnt = born.phase.origin(e); a0 = born.arep(o, cr, c - 3)
    good = []
    for a in np.linspace(0, 0.99, 100):
        rows, P, T, offs = born.restart(S, cr, c - 3, a, c + 8)
        if np.linalg.norm(P[-1, 3:6] - S[c + 8, 3:6]) < 5: good.append(round(a, 2))
    # runs
    runs = []; 
    for g in good:
        if runs and abs(g - runs[-1][1] - 0.01) < 1e-6: runs[-1][1] = g
        else: runs.append([g, g])
    if len(runs) > 1 and runs[0][0] == 0.0 and runs[-1][1] == 0.99: runs[0][0] = runs[-1][0] - 1; runs.pop()
    print(ep, c, 'a_rep %.3f' % a0, 'runs', ' '.join('%.2f..%.2f' % tuple(r) for r in runs))
