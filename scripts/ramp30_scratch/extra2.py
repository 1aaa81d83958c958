import json, sys, numpy as np
sys.argv = [sys.argv[0], 'x']
exec(open('fitn.py').read().split("ang = lambda")[0].replace("out = open", "#"))
rows = [json.loads(l) for l in open('fast.jsonl')]
eps = {}
for r in rows:
    if r['nfaces'] < 2: continue
    ep, k = r['ep'], r['k']
    if ep not in eps: eps[ep] = rlfit.read_recording(root + '/ball_trajectories/episode_%06d.csv' % ep)[0]
    e = eps[ep]; S = e['states']; dt = e['step_dt_s'][k]; st = S[k]
    o0, L = restart(st, dt, debug=True)
    hits = [l for l in L if l[12] * l[4] + l[13] * l[5] + l[14] * l[6] < 0]
    h = np.array(hits[0]); x0 = h[0:3]; rr = h[11]; sv = h[15:18]
    man = touching(x0, rr)
    # distinct faces with their max penetration
    faces = []
    for p, t, n in man:
        if all(np.degrees(np.arccos(min(1, n @ f[1]))) > 1 for f in faces): faces.append((p, n))
    if len(faces) < 2: continue
    nfit = np.array(r["nfit"]); nm = np.array(r['cands']['manifold']); nd = np.array(r['cands']['deepest'])
    dd = nd - nm; s = float((nfit - nm) @ dd / (dd @ dd))
    vhat = -sv / np.linalg.norm(sv)
    print(json.dumps(dict(ep=ep, k=k, patch=r['patch'], s=s, ratio=faces[1][0] / faces[0][0], p1=faces[0][0],
        vn=r['vn'], vdeep=float(vhat @ nd), vman=float(vhat @ nm), ticks=r['ticks'],
        ang_today=r['ang']['manifold'], ang_deep=r['ang']['deepest'])))
