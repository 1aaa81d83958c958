# new34 scratch: the replay's tick clock in Python with the model itself (Model.step_ticks):
# the clock origin (EstimateBallClockOrigin's three tiers, else half a tick), the tick pair
# around a row (BallTicksAroundRowBy: 3 rounds, the best miss), BallStartTicks' rule, and
# restarts from a recorded row to any later rows. Checked against `rlsim replay ball` (check.py).
import sys, math, json, numpy as np
sys.path.insert(0, '/work/wt/vel35/build/python')
import rlfit
ROOT = '/work/shared/datasets/lobot'
m = rlfit.Model('ball', data_root=ROOT)
C = dict(zip(m.coefficients['names'], m.coefficients['values']))
import glob
EPS = sorted(int(p[-10:-4]) for p in glob.glob(ROOT + '/ball_trajectories/episode_*.csv'))
def use_fold(ep, summary='/tmp/base35/folds4/replay_summary.json'):
    # crossval's held-out coefficients of `ep` (fold = index % folds, fit/fit.cc), or results/ball
    global m, C
    if summary is None:
        m = rlfit.Model('ball', data_root=ROOT); C = dict(zip(m.coefficients['names'], m.coefficients['values'])); return
    p = json.load(open(summary))['coefficients']['provenance']
    fc = p['fold_coefficients'][EPS.index(ep) % p['crossval_folds']]
    names = rlfit.Model('ball', data_root=ROOT).coefficients['names'] if 'names' not in C else list(C)
    m = rlfit.Model('ball', data_root=ROOT, values=np.array([fc[k] for k in names]))
    C = dict(zip(m.coefficients['names'], m.coefficients['values']))
TPR = 120.0 / 61.0; TICK = 1.0 / 120; G = C.get('gravity_z', -650.0)
def load(ep):
    return rlfit.read_recording('%s/ball_trajectories/episode_%06d.csv' % (ROOT, ep), data_root=ROOT)[0]
def clock_rows(e):
    return [int(round(d * 60.96)) for d in e['step_dt_s']]
def jumps(e):
    S = e['states']; dt = e['step_dt_s']; out = []
    for k in range(len(S) - 1):
        v = S[k, 3:6].copy(); v[2] += G * dt[k]; v *= math.exp(C['drag'] * dt[k]); out.append(S[k + 1, 3:6] - v)
    return out
def origin(e):
    S = e['states']; n = len(S); cr = clock_rows(e)
    if not math.isnan(e['clock_origin_rows']): return e['clock_origin_rows'], 'file'
    j = jumps(e); sc = [0.0] * 3; ss = [0.0] * 3; cnt = [0] * 3
    rows = sum(cr[:2])
    for k in range(2, n - 2):
        if k > 2: rows += cr[k - 1]
        whole = j[k - 1] + j[k]; w2 = whole @ whole
        if w2 < 50.0 ** 2: continue
        tier = 0 if w2 >= 800.0 ** 2 else 1 if w2 >= 200.0 ** 2 else 2
        free = 2.0 if tier == 2 else 5.0
        if np.linalg.norm(j[k - 2]) > free or np.linalg.norm(j[k + 1]) > free: continue
        f = j[k - 1] @ whole / w2
        if not (0.03 < f < 0.97): continue
        ph = 2 * math.pi * (f - rows * TPR); sc[tier] += math.cos(ph); ss[tier] += math.sin(ph); cnt[tier] += 1
    tier = 0 if cnt[0] else 1 if cnt[1] else 2
    if cnt[tier] == 0: return 0.5 / TPR, 'half'
    p0 = math.atan2(ss[tier], sc[tier]) / (2 * math.pi); p0 -= math.floor(p0)
    return p0 / TPR, 'tier%d(%d)' % (tier, cnt[tier])
def frac(o, rows):
    t = (o + rows) * TPR; return t - math.floor(t)
def step1(s):
    return m.step_ticks(s, 1)[1]
def touches(s):
    return m.ball_contact(s[:3])['hit'] or m.ball_contact(step1(s)[:3])['hit']
def pair(row, a):
    # BallTicksAroundRowBy: tick0 <- row - a (step(tick0) - tick0), 3 rounds, best miss kept
    t0 = row.copy(); t1 = step1(t0)
    if a == 0.0: return t0, t1
    miss = lambda p0, p1: np.linalg.norm(p0[:3] * (1 - a) + p1[:3] * a - row[:3]) + np.linalg.norm(p0[3:6] * (1 - a) + p1[3:6] * a - row[3:6]) / 120.0
    best = (t0, t1); bm = miss(t0, t1)
    for _ in range(3):
        t0 = row - (t1 - t0) * a; t1 = step1(t0)
        mm = miss(t0, t1)
        if mm <= bm: best, bm = (t0, t1), mm
    return best
def start_pair(e, o, r, a=None, rule=True):
    # BallStartTicks: the row before's pair where the start row's pair steps into the mesh
    # while the recorded step into it is free flight and the row before's pair is free.
    # Touch test approximated by ball_contact at tick0 and the model's tick1 (scratch).
    S = e['states']; cr = clock_rows(e)
    ar = frac(o, sum(cr[:r])) if a is None else a
    t0, t1 = pair(S[r], ar)
    if not rule or r == 0: return r, ar, t0
    hit = m.ball_contact(t0[:3])['hit'] or m.ball_contact(t1[:3])['hit']
    if not hit: return r, ar, t0
    if np.linalg.norm(jumps(e)[r - 1]) > 5.0: return r, ar, t0
    ab = frac(o, sum(cr[:r - 1])) if a is None else (a - cr[r - 1] * TPR) % 1.0
    b0, b1 = pair(S[r - 1], ab)
    if m.ball_contact(b0[:3])['hit'] or m.ball_contact(b1[:3])['hit']: return r, ar, t0
    return r - 1, ab, b0
def rollout(e, o, r0, r1, a=None, rule=True):
    # rows r0..r1 predicted from the recorded row r0 at the replay's phase (or phase a)
    S = e['states']; cr = clock_rows(e)
    rs, a0, t0 = start_pair(e, o, r0, a, rule)
    offs = [sum(cr[rs:r]) * TPR for r in range(r0, r1 + 1)]
    T = m.step_ticks(t0, int(a0 + offs[-1]) + 3)
    out = []
    for off in offs:
        t = a0 + off; k = int(math.floor(t)); f = t - k
        out.append((1 - f) * T[k] + f * T[k + 1])
    P = np.array(out); P[0] = S[r0]  # its first row is the recorded one
    return P, T, a0, rs
