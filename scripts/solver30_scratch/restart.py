# Scratch (solver30): one-row restarts at map27's 1,159 isolated bounces, one variant per process.
import sys, json, numpy as np, rlfit
rows = [json.loads(l) for l in open('/tmp/map27/all2.jsonl')]
m = rlfit.Model("ball"); import os; H = int(os.environ.get("H30", "4"))
cache = {}
out = open(sys.argv[1], 'w')
for r in rows:
    ep, k = r['ep'], r['k']
    if ep not in cache:
        cache[ep] = rlfit.read_recording(f"/work/shared/datasets/lobot/ball_trajectories/episode_{ep:06d}.csv")[0]
    e = cache[ep]
    dt = e['step_dt_s'][k]
    t = m.predict(e["states"][k], H * dt + 1e-9, dt_s=dt)
    o = t[H, 1:]; rec = e["states"][k + H]
    out.write(json.dumps(dict(ep=ep, k=k, seam=len(r['faces']) >= 2, v=o[3:6].tolist(),
        dv=float(np.linalg.norm(o[3:6] - rec[3:6])), dw=float(np.linalg.norm(o[6:9] - rec[6:9])))) + "\n")
