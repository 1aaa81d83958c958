# new34 scratch: every windowed restart (0.5 s, results/ball) whose start row's pair touches the
# mesh: |dx| 0.5 s on today (BallStartTicks as tk copies it) and from the latest earlier row, at
# most K back, whose own pair is free (advanced over the steps to the start row as any rollout).
import sys, json, math, numpy as np, tk
from win import row_at
tk.use_fold(0, None)
def free_pair(e, o, r):
    cr = tk.clock_rows(e); a = tk.frac(o, sum(cr[:r])); b0, b1 = tk.pair(e['states'][r], a)
    return (not (tk.m.ball_contact(b0[:3])['hit'] or tk.m.ball_contact(b1[:3])['hit'])), a, b0
def from_row(e, o, rb, r):
    cr = tk.clock_rows(e); ok, ab, b0 = free_pair(e, o, rb)
    off = sum(cr[rb:r]) * tk.TPR; T = tk.m.step_ticks(b0, int(ab + off) + 3)
    k = int(ab + off); f = ab + off - k; return (1 - f) * T[k] + f * T[k + 1]
if __name__ == "__main__":
    out = []
    for ep in tk.EPS:
        e = tk.load(ep); S = e['states']; t = e['t_s']; N = len(S) - 1; o, how = tk.origin(e)
        J = tk.jumps(e); w = 0
        while True:
            st = row_at(t, 0, w * 0.5)
            if st < 0 or (w > 0 and st <= 0) or st >= N: break
            w += 1
            r = row_at(t, st, 0.5)
            if r < 0 or st == 0: continue
            ok, _, _ = free_pair(e, o, st)
            if ok: continue
            P, _, _, rs = tk.rollout(e, o, st, r)
            d = dict(ep=ep, start=st, today_from=rs, today=round(float(np.linalg.norm(P[-1, :3] - S[r, :3])), 2),
                     jumps=[round(float(np.linalg.norm(J[k])), 0) for k in range(max(st - 3, 0), st + 1)])
            for K in (1, 2, 3):
                rb = None
                for b in range(st - 1, max(st - K, 0) - 1, -1):
                    if free_pair(e, o, b)[0]: rb = b; break
                d['K%d_from' % K] = rb
                d['K%d' % K] = d['today'] if rb is None else round(float(np.linalg.norm(from_row(e, o, rb, r)[:3] - S[r, :3])), 2)
            out.append(d)
    json.dump(out, open('win3.json', 'w'))
    for K in ('today', 'K1', 'K2', 'K3'):
        A = np.array([d[K] for d in out])
        print(K, len(A), 'median %.3f p90 %.2f max %.1f' % (np.median(A), np.percentile(A, 90), A.max()),
              'better', sum(d[K] < d['today'] - 0.01 for d in out), 'worse', sum(d[K] > d['today'] + 0.01 for d in out), 'changed', sum(d['%s_from' % K] is not None and d['%s_from' % K] != d['today_from'] for d in out) if K != 'today' else '')
    for d in sorted(out, key=lambda d: -max(d['today'], d['K2'], d['K3']))[:14]: print(d)
