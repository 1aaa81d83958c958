import sys, json, numpy as np; sys.path.insert(0, '/tmp/map27')
import fitn, rlfit
rows = [json.loads(l) for l in open('all2.jsonl')]
rows = [r for r in rows if len(r['faces']) >= 2]
res = {s: [] for s in [0.5, 0.75, 1.0, 1.25, 1.5, 2.0]}
cache = {}
for r in rows:
    ep, k = r['ep'], r['k']
    if ep not in cache: cache = {ep: rlfit.read_recording(f"{fitn.D}/ball_trajectories/episode_{ep:06d}.csv")[0]}
    e = cache[ep]; S = e['states']; dt = e['step_dt_s'][k]
    t = np.array(r['ntoday']); a = np.array(r['avg'])
    for s in res:
        n = t + s * (a - t); n /= np.linalg.norm(n)
        res[s].append(fitn.err(fitn.run_with_normal(S[k], dt, n), S[k+3])[0])
for s, x in res.items():
    x = np.array(x); print(s, f"median {np.median(x):.1f} p90 {np.percentile(x,90):.1f} max {x.max():.1f}")
