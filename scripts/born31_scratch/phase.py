# goal31 scratch: the model's rule with each tick phase a at the contact (rows c-3..c+8 from the
# recorded row c-3): the replay's own phase (EstimateBallClockOrigin, else half a tick) against
# the phases that reproduce the rows after the contact.
import sys, math, json, numpy as np
import goal
m = goal.m; TPR = 120.0 / 61.0; TICK = goal.TICK; G = goal.G
def origin(e):
    S = e['states']; dt = e['step_dt_s']; n = len(S)
    if n < 5: return None
    jump = []
    for k in range(n - 1):
        v = S[k, 3:6].copy(); v[2] += G * dt[k]; v *= math.exp(goal.C['drag'] * dt[k]); jump.append(S[k + 1, 3:6] - v)
    cr = lambda k: int(round(dt[k] * 60.96))
    rows_to = lambda k: sum(cr(i) for i in range(k))
    sc = ss = 0; cnt = 0
    for k in range(2, n - 2):
        whole = jump[k - 1] + jump[k]; w2 = whole @ whole
        if w2 < 800 ** 2: continue
        if np.linalg.norm(jump[k - 2]) > 5 or np.linalg.norm(jump[k + 1]) > 5: continue
        f = jump[k - 1] @ whole / w2
        if not (0.03 < f < 0.97): continue
        ph = 2 * math.pi * (f - rows_to(k) * TPR); sc += math.cos(ph); ss += math.sin(ph); cnt += 1
    if cnt == 0: return 0.5 / TPR, 0
    p0 = math.atan2(ss, sc) / (2 * math.pi); p0 -= math.floor(p0)
    return p0 / TPR, cnt
def run(ep, c, n_after=8):
    e = goal.rlfit.read_recording('%s/ball_trajectories/episode_%06d.csv' % (goal.ROOT, ep))[0]
    S = e['states']; dt = e['step_dt_s']; s0 = c - 3
    cr = [int(round(d * 60.96)) for d in dt]
    o, cnt = origin(e)
    t_s0 = (o + sum(cr[:s0])) * TPR; a_rep = t_s0 - math.floor(t_s0)
    rows = list(range(s0, min(c + n_after + 1, len(S))))
    offs = [sum(cr[s0:r]) * TPR for r in rows]
    nt = int(offs[-1]) + 4
    res = []
    for a in np.linspace(0, 0.99, 100):
        st = S[s0].copy(); st[0:3] -= st[3:6] * a * TICK; st[2] -= 0.5 * G * (a * TICK) ** 2; st[5] -= G * a * TICK
        T = m.step_ticks(st, nt)
        P = goal.rows_from(T, a, offs)
        dv = np.linalg.norm(P[:, 3:6] - S[rows, 3:6], axis=1)
        res.append((a, float(dv[-1]), float(dv.max())))
    arr = np.array(res)
    near = arr[np.argmin(np.abs(((arr[:, 0] - a_rep + 0.5) % 1) - 0.5))]
    good = arr[arr[:, 1] < 5, 0]
    return dict(ep=ep, row=c, straddled=cnt, a_replay=round(a_rep, 3), dv_last_at_replay_a=round(near[1], 1),
                best_a=round(float(arr[np.argmin(arr[:, 1]), 0]), 2), best_dv_last=round(float(arr[:, 1].min()), 1),
                a_within_5=('%.2f-%.2f (%d of 100)' % (good.min(), good.max(), len(good))) if len(good) else 'none',
                dv_last_range=[round(float(arr[:, 1].min()), 1), round(float(np.median(arr[:, 1])), 1), round(float(arr[:, 1].max()), 1)])
if __name__ == '__main__':
    for arg in sys.argv[1:]:
        ep, c = map(int, arg.split('@'))
        print(json.dumps(run(ep, c)), flush=True)
