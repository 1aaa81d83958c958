# Scratch (map27): evaluate candidate normal rules at the seam bounces by restarts.
import sys, json, numpy as np; sys.path.insert(0, '/tmp/map27')
import fitn, rlfit
rows = [json.loads(l) for l in open(sys.argv[1])]
rows = [r for r in rows if 'skip' not in r and len(r['faces']) >= 2]
cache = {}
out = []
for r in rows:
    ep, k = r['ep'], r['k']
    if ep not in cache: cache = {ep: rlfit.read_recording(f"{fitn.D}/ball_trajectories/episode_{ep:06d}.csv")[0]}
    e = cache[ep]; S = e['states']; dt = e['step_dt_s'][k]
    man = fitn.manifold(np.array(r['x0']), fitn.RC + fitn.MARGIN)
    F = np.array([c['face'] for c in man]); P = np.array([c['pen'] for c in man])
    def norm(v): return v / np.linalg.norm(v)
    # distinct faces: deepest triangle of each face normal
    dist = []
    for c in man:
        if all(np.dot(c['face'], d['face']) < np.cos(np.radians(1)) for d in dist): dist.append(c)
    cands = {
        'avg4': norm((P[:4, None] * F[:4]).sum(0)),
        'avgall': norm((P[:, None] * F).sum(0)),
        'avg4_sq': norm((P[:4, None] ** 2 * F[:4]).sum(0)),
        'eqfaces': norm(np.array([d['face'] for d in dist]).sum(0)),
        'penfaces': norm(np.array([d['pen'] * np.array(d['face']) for d in dist]).sum(0)),
        'deepface': np.array(man[0]['face']),
        'second': np.array(dist[1]['face']),
    }
    res = dict(ep=ep, k=k)
    for name, n in cands.items():
        o = fitn.run_with_normal(S[k], dt, n)
        res[name] = fitn.err(o, S[k+3])[0]
    out.append(res); print(json.dumps(res), flush=True)
