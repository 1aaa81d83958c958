# Scratch (subset31): at each ramp bounce 'every touching triangle' misses, the subsets within
# 0.2 deg of the fitted normal: what the dropped triangles are (depth rank, face interior, and
# the distance of their sphere contact point to the nearest kept one: a manifold merge needs <= ~1-2 uu).
import pickle, itertools
exec(open('/tmp/subset31/rules.py').read().split('\ndef rules_for')[0])
rows = {(r['ep'], r['k']): r for r in pickle.load(open('/tmp/subset31/rules.pkl', 'rb'))}
allx = []
for rec in recs:
    if rec['patch'] not in ('side ramp', 'corner ramp', 'back ramp'): continue
    if rows[(rec['ep'], rec['k'])]['all: eq every touching'][1] <= 0.2: continue
    pts = sorted(points_of(rec), key=lambda p: p['dist']); n = len(pts)
    if n > 12: pts = pts[:12]; n = 12
    best = None
    for m in range(n, 0, -1):
        for sub in itertools.combinations(range(n), m):
            if ang(unitsum([pts[i]['n'] for i in sub]), rec['nfit']) > 0.2: continue
            drop = [i for i in range(n) if i not in sub]
            gap = max([min(np.linalg.norm(pts[i]['pA'] - pts[j]['pA']) for j in sub) for i in drop] or [0])
            if best is None or gap < best[0]: best = (gap, sub, drop)
    if best is None:
        print(rec['ep'], rec['k'], rec['patch'], 'n', n, 'no subset'); continue
    gap, sub, drop = best
    allx.append(gap)
    print(rec['ep'], rec['k'], rec['patch'][:11], 'n', n, 'kept', len(sub), 'dropped depth ranks', drop,
          'interior', [pts[i]['interior'] for i in drop], 'max merge dist %.2f uu' % gap,
          'depths', ' '.join('%.2f' % -p['dist'] for p in pts))
print('max merge distance needed: median %.2f, values %s' % (np.median(allx), ' '.join('%.1f' % g for g in sorted(allx))))
