# Scratch (subset31): does ANY visit order explain each ramp/back-ramp bounce under Bullet's
# manifold (merge within thr by sphere point, cap 4 by sortCachedPoints)? All orders for <= 7
# touching triangles, 5040 random ones (seed 31) above.
import pickle, itertools, random
exec(open('/tmp/subset31/rules.py').read().split('\ndef rules_for')[0])
random.seed(31)
for thr in (1.0, 2.0):
    for per_piece in (False, True):
        expl = 0; tot = 0; lines = []
        for rec in recs:
            if rec['patch'] not in ('side ramp', 'corner ramp', 'back ramp'): continue
            pts = points_of(rec); tot += 1
            n = len(pts)
            perms = itertools.permutations(range(n)) if n <= 7 else (random.sample(range(n), n) for _ in range(5040))
            best = 1e9; nbest = 0; seen = 0
            for pm in perms:
                srt = [pts[i] for i in pm]
                if per_piece:
                    kept = []
                    for b in sorted(set(p['piece'] for p in srt)):
                        kept += manifold([p for p in srt if p['piece'] == b], thr, 'pA')
                else:
                    kept = manifold(srt, thr, 'pA')
                nn = unitsum([p['n'] for p in kept]); a = ang(nn, rec['nfit'])
                seen += 1
                if a <= 0.2: nbest += 1
                best = min(best, a)
            expl += best <= 0.2
            lines.append('%d %d %s n=%d best %.2f deg, share of orders within 0.2: %.2f' % (rec['ep'], rec['k'], rec['patch'], n, best, nbest / seen))
        print('thr', thr, 'per_piece', per_piece, 'explained by some order:', expl, 'of', tot, flush=True)
        if thr == 1.0 and not per_piece: print('\n'.join(lines))
