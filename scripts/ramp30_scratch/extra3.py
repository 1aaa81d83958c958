import json, sys, numpy as np
sys.argv = [sys.argv[0], 'x']
exec(open('fitn.py').read().split("ang = lambda")[0].replace("out = open", "#"))
rows = [json.loads(l) for l in open('fast.jsonl')]
eps = {}
for r in rows:
    ep, k = r['ep'], r['k']
    if ep not in eps: eps[ep] = rlfit.read_recording(root + '/ball_trajectories/episode_%06d.csv' % ep)[0]
    e = eps[ep]; S = e['states']; dt = e['step_dt_s'][k]; st = S[k]
    o0, L = restart(st, dt, debug=True)
    hits = [l for l in L if l[12] * l[4] + l[13] * l[5] + l[14] * l[6] < 0]
    h = np.array(hits[0]); sv = h[15:18]
    nm = np.array(r['cands']['manifold']); nf = np.array(r['nfit'])
    vt = sv - (sv @ nm) * nm  # incoming tangential velocity on the manifold's plane
    tilt = nf - (nf @ nm) * nm
    along = float(tilt @ vt / np.linalg.norm(vt)) if np.linalg.norm(vt) > 1 else 0.0
    side = float(np.linalg.norm(tilt - along * vt / max(np.linalg.norm(vt), 1e-9)))
    print(json.dumps(dict(ep=ep, k=k, patch=r['patch'], nfaces=r['nfaces'], vn=r['vn'], vt=float(np.linalg.norm(vt)),
          along_deg=float(np.degrees(along)), side_deg=float(np.degrees(side)), tan_ratio=float(np.linalg.norm(vt) / -r['vn']))))
