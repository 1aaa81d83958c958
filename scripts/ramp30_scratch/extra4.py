# Back ramp circle (pitch.dat's vertices: centre |y| 4960, z 160, r 160) against the fitted normal.
import json, sys, numpy as np
sys.argv = [sys.argv[0], 'x']
exec(open('fitn.py').read().split("ang = lambda")[0].replace("out = open", "#"))
rows = [json.loads(l) for l in open('fast.jsonl')]
for r in rows:
    if r['patch'] != 'back ramp': continue
    ep, k = r['ep'], r['k']
    e = rlfit.read_recording(root + '/ball_trajectories/episode_%06d.csv' % ep)[0]
    S = e['states']; dt = e['step_dt_s'][k]; st = S[k]; rec = S[k + H]
    o0, L = restart(st, dt, debug=True)
    hits = [l for l in L if l[12] * l[4] + l[13] * l[5] + l[14] * l[6] < 0]
    x0 = np.array(hits[0][0:3])
    c = np.array([x0[0], np.sign(x0[1]) * 4960.0, 160.0]); d = c - x0; d /= np.linalg.norm(d)
    nf = np.array(r['nfit'])
    print(json.dumps(dict(ep=ep, k=k, x0=x0.tolist(), ang=float(np.degrees(np.arccos(np.clip(d @ nf, -1, 1)))), err=err(restart(st, dt, d), rec), today=r['errs']['today'])))
