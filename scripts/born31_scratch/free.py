import sys, math, numpy as np
sys.path.insert(0, '/tmp/born31/g')
import goal
for arg in sys.argv[1:]:
    ep, c = map(int, arg.split('@'))
    e = goal.rlfit.read_recording('%s/ball_trajectories/episode_%06d.csv' % (goal.ROOT, ep))[0]
    S = e['states']; dt = e['step_dt_s']
    js = []
    for k in range(c - 8, c + 2):
        v = S[k, 3:6].copy(); v[2] += goal.G * dt[k]; v *= math.exp(goal.C['drag'] * dt[k]); js.append('%d:%.0f' % (k - c, np.linalg.norm(S[k + 1, 3:6] - v)))
    print(ep, c, 'z %.1f' % S[c - 3, 2], ' '.join(js))
