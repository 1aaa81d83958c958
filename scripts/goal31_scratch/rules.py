# goal31 scratch: the goal contacts re-simulated tick by tick in Python with candidate normal rules
# (the model's law, goal.law; the contact set from every triangle within the contact radius),
# from row c-3 at the replay's tick phase; |dv| at rows c+1..c+8 against the record.
import sys, math, json, numpy as np
import goal, phase
m = goal.m; TPR = phase.TPR; TICK = goal.TICK; G = goal.G; R = goal.C['contact_radius']
tris = goal.tris
cent = tris.mean(1); rad = np.linalg.norm(tris - cent[:, None], axis=2).max(1)
FN = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0]); FN /= np.linalg.norm(FN, axis=1)[:, None]
def closest(x, t):
    A, B, C_ = t; ab, ac, ap = B - A, C_ - A, x - A
    d1, d2 = ab @ ap, ac @ ap
    if d1 <= 0 and d2 <= 0: return A, 'v'
    bp = x - B; d3, d4 = ab @ bp, ac @ bp
    if d3 >= 0 and d4 <= d3: return B, 'v'
    vc = d1 * d4 - d3 * d2
    if vc <= 0 and d1 >= 0 and d3 <= 0: return A + d1 / (d1 - d3) * ab, 'e'
    cp = x - C_; d5, d6 = ab @ cp, ac @ cp
    if d6 >= 0 and d5 <= d6: return C_, 'v'
    vb = d5 * d2 - d1 * d6
    if vb <= 0 and d2 >= 0 and d6 <= 0: return A + d2 / (d2 - d6) * ac, 'e'
    va = d3 * d6 - d5 * d4
    if va <= 0 and (d4 - d3) >= 0 and (d5 - d6) >= 0: return B + (d4 - d3) / ((d4 - d3) + (d5 - d6)) * (C_ - B), 'e'
    den = 1 / (va + vb + vc); return A + ab * vb * den + ac * vc * den, 'f'
def touching(x):
    idx = np.where(np.linalg.norm(cent - x, axis=1) <= R + rad + 1e-6)[0]
    out = []
    for i in idx:
        q, f = closest(x, tris[i]); d = np.linalg.norm(x - q)
        if d <= R:
            nf = FN[i] if FN[i] @ (x - q) >= 0 else -FN[i]
            raw = (x - q) / d if d > 1e-9 else nf
            out.append(dict(i=i, pen=R - d, raw=raw, face=nf, feat=f))
    out.sort(key=lambda c: -c['pen'])
    return out
def normal(rule, cs):
    if rule == 'deepest raw': return cs[0]['raw']
    if rule == 'raw avg all': s = sum(c['raw'] for c in cs)
    elif rule == 'face avg all': s = sum(c['face'] for c in cs)
    elif rule == 'distinct faces all':
        fs = []
        for c in cs:
            if not any(np.allclose(c['face'], f, atol=1e-4) for f in fs): fs.append(c['face'])
        s = sum(fs)
    elif rule == 'face interior else raw, all':
        s = sum(c['face'] if c['feat'] == 'f' else c['raw'] for c in cs)
    elif rule == 'face interior else raw, 4 deepest':
        s = sum(c['face'] if c['feat'] == 'f' else c['raw'] for c in cs[:4])
    return s / np.linalg.norm(s)
RULES = ['model', 'deepest raw', 'raw avg all', 'face avg all', 'distinct faces all', 'face interior else raw, all', 'face interior else raw, 4 deepest']
def sim(rule, st, nt):
    if rule == 'model': return m.step_ticks(st, nt)
    T = [st]
    s = st
    for k in range(nt):
        cs = touching(s[:3])
        if not cs:
            e = math.exp(goal.C['drag'] * TICK)
            v1 = np.array([s[3] * e, s[4] * e, (s[5] + G * TICK) * e]); s = np.concatenate([s[:3] + v1 * TICK, v1, s[6:9]])
        else:
            s = goal.law(s, normal(rule, cs), cs[0]['pen'])
        T.append(s)
    return np.array(T)
def run(ep, c, n_after=8, a=None):
    e = goal.rlfit.read_recording('%s/ball_trajectories/episode_%06d.csv' % (goal.ROOT, ep))[0]
    S = e['states']; dt = e['step_dt_s']; s0 = c - 3
    cr = [int(round(d * 60.96)) for d in dt]
    if a is None:
        o, cnt = phase.origin(e); t0 = (o + sum(cr[:s0])) * TPR; a = t0 - math.floor(t0)
    rows = list(range(s0, min(c + n_after + 1, len(S))))
    offs = [sum(cr[s0:r]) * TPR for r in rows]
    nt = int(offs[-1]) + 4
    st = S[s0].copy(); st[0:3] -= st[3:6] * a * TICK; st[2] -= 0.5 * G * (a * TICK) ** 2; st[5] -= G * a * TICK
    out = dict(ep=ep, row=c, a=round(a, 3))
    for rule in RULES:
        T = sim(rule, st, nt)
        P = goal.rows_from(T, a, offs)
        dv = np.linalg.norm(P[:, 3:6] - S[rows, 3:6], axis=1)
        out[rule] = [round(float(dv[-1]), 1), round(float(dv.max()), 1)]
    return out
if __name__ == '__main__':
    for arg in sys.argv[1:]:
        p = arg.split('@'); ep, c = int(p[0]), int(p[1]); a = float(p[2]) if len(p) > 2 else None
        print(json.dumps(run(ep, c, a=a)), flush=True)
