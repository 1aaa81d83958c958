# Scratch (solver30): the solver's effective normal normalize(sum lambda_i n_i) at the first
# approaching tick of each seam bounce vs map27's fitted normal, closest feature and average.
import sys, os, json, tempfile, numpy as np, rlfit
rows = [json.loads(l) for l in open('/tmp/map27/all2.jsonl')]
seam = [r for r in rows if len(r['faces']) >= 2]
m = rlfit.Model("ball"); cache = {}
def ang(a, b): return float(np.degrees(np.arccos(np.clip(np.dot(a, b) / np.linalg.norm(a) / np.linalg.norm(b), -1, 1))))
res = []
for r in seam:
    ep, k = r['ep'], r['k']
    if ep not in cache: cache[ep] = rlfit.read_recording(f"/work/shared/datasets/lobot/ball_trajectories/episode_{ep:06d}.csv")[0]
    e = cache[ep]; dt = e['step_dt_s'][k]
    f = tempfile.TemporaryFile(); saved = os.dup(2); os.dup2(f.fileno(), 2)
    try: m.predict(e['states'][k], 4 * dt + 1e-9, dt_s=dt)
    finally: os.dup2(saved, 2); os.close(saved)
    f.seek(0); lines = [l for l in f.read().decode().splitlines() if l.startswith('SOLVER30')]
    neff = None
    for l in lines:
        p = l.split('|')[0].split(); s = np.array(list(map(float, p[2:5])))
        if np.linalg.norm(s) > 1e-6: neff = s / np.linalg.norm(s); first = l; break
    if neff is None: continue
    t = np.array(r['ntoday']); a = np.array(r['avg']); fit = np.array(r['nfit'])
    d = a - t; sv = float((neff - t) @ d / (d @ d)) if d @ d > 1e-10 else float('nan')
    sf = float((fit - t) @ d / (d @ d)) if d @ d > 1e-10 else float('nan')
    res.append(dict(ep=ep, k=k, s_solver=sv, s_fit=sf, a_solver_fit=ang(neff, fit), a_avg_fit=ang(a, fit), a_today_fit=ang(t, fit), first=first))
json.dump(res, open(sys.argv[1], 'w'))
A = lambda key: np.array([x[key] for x in res])
print(len(res), "angle to fitted normal, deg median (p90): solver", np.median(A('a_solver_fit')).round(2), np.percentile(A('a_solver_fit'), 90).round(2),
      "avg", np.median(A('a_avg_fit')).round(2), np.percentile(A('a_avg_fit'), 90).round(2), "closest", np.median(A('a_today_fit')).round(2), np.percentile(A('a_today_fit'), 90).round(2))
ss = A('s_solver'); sf = A('s_fit'); ok = ~np.isnan(ss) & ~np.isnan(sf)
print("s (0 closest, 1 avg): solver median", np.median(ss[ok]).round(2), "q10..q90", np.percentile(ss[ok], 10).round(2), np.percentile(ss[ok], 90).round(2),
      "| fitted median", np.median(sf[ok]).round(2), np.percentile(sf[ok], 10).round(2), np.percentile(sf[ok], 90).round(2),
      "| solver nearer the fit than avg in", int((A('a_solver_fit') < A('a_avg_fit')).sum()), "| corr(s_solver, s_fit)", np.corrcoef(ss[ok], sf[ok])[0, 1].round(2))
