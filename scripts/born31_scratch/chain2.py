# born31 scratch: what a model that reproduces every recorded contact from the recorded state
# would leave at the last row. Every contact of the record (a run of steps whose velocity is off
# free flight by more than 20 uu/s, starting at row c) is restarted from the recorded row c - 3
# at the replay's clock phase (results/ball, step_ticks): a miss where |dv| at c + 8 is above 5
# uu/s. The emulated rollout restarts from the record (at the replay's phase) at the first row
# two rows after each missed contact's run; its |dx| at the last row is what would be left.
import sys, math, json, numpy as np
import born2 as born, chain
goal = born.goal
def run(ep, thr=5.0):
    e = goal.rlfit.read_recording('%s/ball_trajectories/episode_%06d.csv' % (goal.ROOT, ep))[0]
    S = e['states']; cr = [int(round(d * 60.96)) for d in e['step_dt_s']]; N = len(S) - 1
    o, cnt = born.phase.origin(e); J = chain.jumps(e)
    runs = []; k = 0
    while k < len(J):
        if J[k] > 20:
            s = k
            while k < len(J) and J[k] > 20: k += 1
            runs.append((s, k))  # steps s..k-1 off free flight; row k arrives off, row k+1 onwards
        else: k += 1
    missed = []
    for s, end in runs:
        if s - 3 < 0 or s + 8 > N: continue
        rows, P, _, _ = born.restart(S, cr, s - 3, born.arep(o, cr, s - 3), s + 8)
        dv8 = float(np.linalg.norm(P[-1, 3:6] - S[s + 8, 3:6]))
        if dv8 > thr: missed.append((s, end, round(dv8, 1)))
    rows, P, _, _ = born.restart(S, cr, 0, born.arep(o, cr, 0), N)
    open_last = float(np.linalg.norm(P[-1, 0:3] - S[N, 0:3]))
    r0 = 0
    for s, end, _ in missed:
        r = min(end + 2, N)
        if r > r0: r0 = r
    if r0 >= N - 1: left = 0.0
    else:
        rows, P, _, _ = born.restart(S, cr, r0, born.arep(o, cr, r0), N)
        left = float(np.linalg.norm(P[-1, 0:3] - S[N, 0:3]))
    return dict(ep=ep, straddled=cnt, contacts=len(runs), missed=missed, last_restart=r0, open_last=round(open_last, 2), left=round(left, 2))
if __name__ == '__main__':
    import os
    eps = [int(a) for a in sys.argv[1:]] or sorted(int(f[8:14]) for f in os.listdir(goal.ROOT + '/ball_trajectories') if f.startswith('episode_'))
    for ep in eps:
        print(json.dumps(run(ep)), flush=True)
