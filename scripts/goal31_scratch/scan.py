# goal31 scratch: every goal contact over the 258 episodes (a velocity jump over 20 uu/s off free
# flight with the ball within 100 uu of the goal's mouth or inside the goal), the model from row
# c-3 at the replay's phase: |dv| at c+8; and the best of 20 phases.
import glob, math, json, numpy as np
import goal, phase
m = goal.m; TPR = phase.TPR; TICK = goal.TICK; G = goal.G
def dv_at(S, cr, s0, rows, a):
    offs = [sum(cr[s0:r]) * TPR for r in rows]; nt = int(offs[-1]) + 4
    st = S[s0].copy(); st[0:3] -= st[3:6] * a * TICK; st[2] -= 0.5 * G * (a * TICK) ** 2; st[5] -= G * a * TICK
    T = m.step_ticks(st, nt); P = goal.rows_from(T, a, offs)
    return float(np.linalg.norm(P[-1, 3:6] - S[rows[-1], 3:6]))
out = []
for f in sorted(glob.glob(goal.ROOT + '/ball_trajectories/episode_*.csv')):
    e = goal.rlfit.read_recording(f)[0]; S = e['states']; dt = e['step_dt_s']; n = len(S)
    ep = int(f[-10:-4]); cr = [int(round(d * 60.96)) for d in dt]
    o, cnt = phase.origin(e)
    last = -100
    for k in range(3, n - 10):
        v = S[k, 3:6].copy(); v[2] += G * dt[k]; v *= math.exp(goal.C['drag'] * dt[k])
        if np.linalg.norm(S[k + 1, 3:6] - v) < 20: continue
        x = S[k, :3]
        if not (abs(x[1]) > 5000 and abs(x[0]) < 1100): continue
        if k - last < 10: last = k; continue
        last = k
        # free flight over the 3 rows before (a clean start)
        ok = True
        for j in range(k - 3, k):
            vj = S[j, 3:6].copy(); vj[2] += G * dt[j]; vj *= math.exp(goal.C['drag'] * dt[j])
            if np.linalg.norm(S[j + 1, 3:6] - vj) > 5: ok = False
        if not ok: continue
        s0 = k - 2; rows = list(range(s0, k + 9))
        t0 = (o + sum(cr[:s0])) * TPR; a = t0 - math.floor(t0)
        d_rep = dv_at(S, cr, s0, rows, a)
        d_all = [dv_at(S, cr, s0, rows, b) for b in np.linspace(0, 0.95, 20)]
        vin = S[k, 3:6]
        r = dict(ep=ep, row=k + 1, straddled=cnt, x=[round(float(q)) for q in x], speed=round(float(np.linalg.norm(vin))), dv_replay=round(d_rep, 1), dv_best=round(min(d_all), 1), phases_ok=int(sum(d < 5 for d in d_all)))
        out.append(r); print(json.dumps(r), flush=True)
json.dump(out, open('scan.json', 'w'))
