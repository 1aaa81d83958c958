# Scratch (subset31): how much freedom is 'some visit order'? Bounces where SOME subset of the
# touching triangles (equal weights) lands within 0.2 deg of the fitted normal, and the share of
# subsets (and of visit orders, perms.log) that do.
import pickle, itertools
exec(open('/tmp/subset31/rules.py').read().split('\ndef rules_for')[0])
tot = ex4 = exa = 0; sh4 = []; sha = []
for rec in recs:
    if rec['patch'] not in ('side ramp', 'corner ramp', 'back ramp'): continue
    pts = points_of(rec); n = len(pts); tot += 1
    if n > 12: pts = sorted(pts, key=lambda p: p['dist'])[:12]; n = 12
    g4 = ga = c4 = ca = 0
    for m in range(1, n + 1):
        for sub in itertools.combinations(range(n), m):
            a = ang(unitsum([pts[i]['n'] for i in sub]), rec['nfit']) <= 0.2
            ca += 1; ga += a
            if m <= 4: c4 += 1; g4 += a
    ex4 += g4 > 0; exa += ga > 0
    if n >= 4: sh4.append(g4 / c4); sha.append(ga / ca)
print('bounces', tot, 'some subset <= 4 explains', ex4, 'some subset', exa)
print('share of subsets <= 4 within 0.2 (n >= 4): median %.2f' % np.median(sh4), 'any size: %.2f' % np.median(sha))
