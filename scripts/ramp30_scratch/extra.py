import json, sys, numpy as np, collections
sys.argv = [sys.argv[0], 'x']
exec(open('fitn.py').read().split("ang = lambda")[0].replace("out = open", "#"))
rows = [json.loads(l) for l in open('fast.jsonl')]
eps = {}
res = []
for r in rows:
    ep, k = r['ep'], r['k']
    if ep not in eps: eps[ep] = rlfit.read_recording(root + '/ball_trajectories/episode_%06d.csv' % ep)[0]
    e = eps[ep]; S = e['states']; dt = e['step_dt_s'][k]; st = S[k]; rec = S[k + H]
    o0, L = restart(st, dt, debug=True)
    hits = [l for l in L if l[12] * l[4] + l[13] * l[5] + l[14] * l[6] < 0]
    h = np.array(hits[0]); x0 = h[0:3]; rr = h[11]; sv = h[15:18]; xprev = x0 - sv * dt
    # swept first touch: bisect the fraction along xprev->x0 where the sphere first touches
    a, b = 0.0, 1.0
    if touching(xprev, rr): a = b = 0.0
    for _ in range(40):
        mid = (a + b) / 2
        if touching(xprev + mid * (x0 - xprev), rr): b = mid
        else: a = mid
    xf = xprev + b * (x0 - xprev)
    first = avg_of(touching(xf, rr + 0.05))
    nfit = np.array(r['nfit'])
    out = dict(ep=ep, k=k, patch=r['patch'], frac=b)
    out['first_ang'] = float(np.degrees(np.arccos(np.clip(first @ nfit, -1, 1))))
    out['first_err'] = err(restart(st, dt, first), rec)
    if r['patch'] == 'side ramp':
        c = np.array([np.sign(x0[0]) * 3839.9, x0[1], 256.2]); d = c - x0; d /= np.linalg.norm(d)
        out['circ_ang'] = float(np.degrees(np.arccos(np.clip(d @ nfit, -1, 1))))
        out['circ_err'] = err(restart(st, dt, d), rec)
        out['mycirc_vs_exact'] = float(np.degrees(np.arccos(np.clip(d @ np.array(r['cands']['circle']), -1, 1))))
    # s along manifold -> deepest
    nm = np.array(r['cands']['manifold']); nd = np.array(r['cands']['deepest'])
    dd = nd - nm
    out['s_deep'] = float((nfit - nm) @ dd / (dd @ dd)) if dd @ dd > 1e-8 else None
    print(json.dumps(out), flush=True)
