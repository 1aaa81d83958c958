# Scratch (map27): fit a sub-tick phase shift of the restart, with today's normal and with the average.
import sys, json, numpy as np; sys.path.insert(0, '/tmp/map27')
import fitn, rlfit
G = -650.0; H = rlfit.TICK_S
rows = [json.loads(l) for l in open('/tmp/map27/all2.jsonl')]
def patch_ok(r):
    if len(r['faces']) >= 2: return True
    f = r['faces'][0]['face']; return 0.02 < abs(f[2]) < 0.98
rows = [r for r in rows if patch_ok(r)]
def shift(st, tau):
    s = np.array(st, float); t = tau * H
    s[0:3] += s[3:6] * t; s[2] += 0.5 * G * t * t; s[5] += G * t
    return s
def errs(out, rec, tau):
    o = shift(out, -tau)
    return float(np.linalg.norm(o[3:6] - rec[3:6])), float(np.linalg.norm(o[6:9] - rec[6:9]))
cache = {}
taus = np.round(np.arange(-1.0, 1.0001, 0.1), 2)
for r in rows:
    ep, k = r['ep'], r['k']
    if ep not in cache: cache = {ep: rlfit.read_recording(f"{fitn.D}/ball_trajectories/episode_{ep:06d}.csv")[0]}
    e = cache[ep]; S = e['states']; dt = e['step_dt_s'][k]; rec = S[k+3]
    et, ea = [], []
    for tau in taus:
        st = shift(S[k], tau)
        out, dbg = fitn.debug_run(st, dt)
        et.append(errs(out, rec, tau)[0])
        hits = [l for l in dbg if l[9] * l[4] + l[10] * l[5] + l[11] * l[6] < 0]
        if not hits: ea.append(et[-1]); continue
        man = fitn.manifold(np.array(hits[0][0:3]), fitn.RC + fitn.MARGIN)
        if not man: ea.append(et[-1]); continue
        P = np.array([c['pen'] for c in man[:4]]); F = np.array([c['face'] for c in man[:4]])
        avg = (P[:, None] * F).sum(0); avg /= np.linalg.norm(avg)
        ea.append(errs(fitn.run_with_normal(st, dt, avg), rec, tau)[0])
    print(json.dumps(dict(ep=ep, k=k, seam=len(r['faces']) >= 2, frac=r['frac'], taus=taus.tolist(), today=et, avg=ea)), flush=True)
