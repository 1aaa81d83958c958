# Scratch (subset31): null for a fixed visit order: random global triangle rankings (seed 31),
# Bullet's manifold (thr, cap 4); how many of the 40 ramp bounces within 0.2 deg, |dv| p90.
import pickle
exec(open('/tmp/subset31/rules.py').read().split('\ndef rules_for')[0])
rng = np.random.default_rng(31)
RAMP = [r for r in recs if r['patch'] in ('side ramp', 'corner ramp')]
P = {id(r): points_of(r) for r in RAMP}
def run(rank, thr, per_piece):
    ok = 0; errs = []
    for rec in RAMP:
        srt = sorted(P[id(rec)], key=lambda p: (p['piece'], rank[p['t']]) if per_piece else rank[p['t']])
        if per_piece:
            kept = []
            for b in sorted(set(p['piece'] for p in srt)): kept += manifold([p for p in srt if p['piece'] == b], thr, 'pA')
        else: kept = manifold(srt, thr, 'pA')
        n = unitsum([p['n'] for p in kept]); ok += ang(n, rec['nfit']) <= 0.2
        errs.append(np.linalg.norm(impulse(rec['vc'], rec['om'], n)[0] - rec['vo1']))
    return ok, np.percentile(errs, 90), max(errs)
for thr in (0.0, 1.0, 2.0):
    for pp in (False, True):
        res = [run(rng.permutation(len(tris)), thr, pp) for _ in range(200)]
        oks = np.array([r[0] for r in res]); p90 = np.array([r[1] for r in res])
        b = run(rank_own, thr, pp)
        print('thr %g per_piece %s: random orders within 0.2: median %d (q10 %d, q90 %d, max %d); p90 |dv| median %.1f (q10 %.1f); bvh_own %d, p90 %.1f; share of random >= bvh: %.3f, p90 <= bvh: %.3f, max <= bvh: %.3f'
              % (thr, pp, np.median(oks), np.percentile(oks, 10), np.percentile(oks, 90), oks.max(), np.median(p90), np.percentile(p90, 10), b[0], b[1], np.mean(oks >= b[0]), np.mean(p90 <= b[1]), np.mean(np.array([r[2] for r in res]) <= b[2])), flush=True)
