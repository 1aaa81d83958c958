# new34 scratch: where the open loop's arrival error at the six's departing contact comes from:
# per earlier recorded contact (a run of steps off free flight by > 20 uu/s), the open loop's
# |dv| (uu/s) and |dx| (uu) just before it and 3 rows after it (folds 4's per-episode output).
import json, numpy as np, tk, born
for ep, c in [(140, 135), (237, 151), (180, 222), (188, 149), (200, 283), (129, 256)]:
    tk.use_fold(ep); e = tk.load(ep); J = [float(np.linalg.norm(j)) for j in tk.jumps(e)]
    px, pv, rx, rv = born.openloop(ep); dv = np.linalg.norm(pv - rv, axis=1); dx = np.linalg.norm(px - rx, axis=1)
    runs = []; k = 0
    while k < c - 3:
        if J[k] > 20:
            a = k
            while k < c - 3 and J[k] > 20: k += 1
            runs.append((a, k))
        k += 1
    steps = [(a, round(dv[a], 2), round(dv[min(b + 3, c - 3)], 2), round(dx[min(b + 3, c - 3)], 2), round(max(J[a:b]))) for a, b in runs]
    big = sorted(steps, key=lambda s: -(s[2] - s[1]))[:3]
    print(ep, 'contacts before', len(runs), 'largest |dv| growth (row, dv before, after, dx after, jump):', big)
