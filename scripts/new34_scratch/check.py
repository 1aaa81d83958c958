# new34 scratch: tk's open loop from row 0 against `rlsim replay ball`'s (results/ball) last row.
import sys, glob, csv, numpy as np, tk
eps = [int(a) for a in sys.argv[2:]] if len(sys.argv) > 2 else sorted(int(p[-10:-4]) for p in glob.glob(tk.ROOT + '/ball_trajectories/episode_*.csv'))
out = []
for ep in eps:
    if 'fold' in sys.argv[1]: tk.use_fold(ep)
    e = tk.load(ep); S = e['states']; N = len(S) - 1
    o, how = tk.origin(e)
    P, T, a0, rs = tk.rollout(e, o, 0, N)
    rows = list(csv.reader(open('%s/episode_%06d.csv' % (sys.argv[1], ep))))
    last = np.array([float(x) for x in rows[-1][4:7]])
    print(ep, how, round(float(np.linalg.norm(P[-1, :3] - last)), 4), round(float(np.linalg.norm(P[-1, :3] - S[-1, :3])), 2), flush=True)
