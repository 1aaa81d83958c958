# born31 scratch: what a perfect per-contact model would leave at the last row. Open loop from
# row 0 at the replay's clock phase (results/ball, step_ticks); at its first departure (|dv| >
# 20 uu/s for 4 rows) the contact c before it is restarted from the recorded row c - 3 at the
# replay's phase: if that restart departs too within c-3..c+8 (the model misses the contact from
# the exact state), the model is replaced there by the record (the rollout restarts from the
# first free row >= c + 2) and goes on; if it does not (carried in: the rollout's own incoming
# error sent it off), the departure stays and the rollout's last row is what is left.
import sys, math, json, numpy as np
import born2 as born
goal = born.goal
def jumps(e):
    S = e['states']; dt = e['step_dt_s']; J = []
    for k in range(len(S) - 1):
        v = S[k, 3:6].copy(); v[2] += goal.G * dt[k]; v *= math.exp(goal.C['drag'] * dt[k]); J.append(float(np.linalg.norm(S[k + 1, 3:6] - v)))
    return np.array(J)
def departs(dv, thr=20.0, run=4):
    for i in range(len(dv) - run + 1):
        if (dv[i:i + run] > thr).all(): return i
    return None
def run(ep):
    e = goal.rlfit.read_recording('%s/ball_trajectories/episode_%06d.csv' % (goal.ROOT, ep))[0]
    S = e['states']; cr = [int(round(d * 60.96)) for d in e['step_dt_s']]; N = len(S) - 1
    o, cnt = born.phase.origin(e); J = jumps(e)
    r0 = 0; events = []; open_last = None
    while True:
        rows, P, _, _ = born.restart(S, cr, r0, born.arep(o, cr, r0), N)
        dx = np.linalg.norm(P[:, 0:3] - S[rows, 0:3], axis=1); dv = np.linalg.norm(P[:, 3:6] - S[rows, 3:6], axis=1)
        if open_last is None: open_last = float(dx[-1])
        d = departs(dv)
        if d is None: return dict(ep=ep, straddled=cnt, open_last=round(open_last, 2), left=round(float(dx[-1]), 2), events=events)
        d += r0
        ks = [k for k in range(r0 + 3, d + 1) if J[k] > 20]
        if not ks: events.append(['no contact', d]); return dict(ep=ep, straddled=cnt, open_last=round(open_last, 2), left=round(float(dx[-1]), 2), events=events)
        c = ks[-1]
        while c - 1 >= r0 + 3 and J[c - 1] > 20: c -= 1
        rows2, P2, _, _ = born.restart(S, cr, c - 3, born.arep(o, cr, c - 3), min(c + 8, N))
        dv2 = np.linalg.norm(P2[:, 3:6] - S[rows2, 3:6], axis=1)
        miss = departs(dv2) is not None or dv2[-1] > 20
        if not miss:
            events.append(['carried', int(d), int(c), round(float(dx[c - r0 - 3]), 2)])
            return dict(ep=ep, straddled=cnt, open_last=round(open_last, 2), left=round(float(dx[-1]), 2), events=events)
        r = c + 2
        while r < N and J[r - 1] > 20 and r < c + 30: r += 1
        events.append(['miss', int(d), int(c), int(r)])
        if r >= N - 1: return dict(ep=ep, straddled=cnt, open_last=round(open_last, 2), left=0.0, events=events)
        r0 = r
if __name__ == '__main__':
    import os
    eps = [int(a) for a in sys.argv[1:]] or sorted(int(f[8:14]) for f in os.listdir(goal.ROOT + '/ball_trajectories') if f.startswith('episode_'))
    for ep in eps:
        print(json.dumps(run(ep)), flush=True)
