# Scratch (subset31): rules table over the 40 ramp bounces and per patch group.
import pickle, sys, numpy as np
rows = pickle.load(open('/tmp/subset31/rules.pkl', 'rb'))
names = [k for k in rows[0] if isinstance(rows[0][k], tuple)]
RAMP = [r for r in rows if r['patch'] in ('side ramp', 'corner ramp')]
A = 'all: eq every touching'
hard = [r for r in RAMP if r[A][1] > 0.2]
print('ramp', len(RAMP), 'unexplained by all', len(hard))
def q(v):
    v = np.array(v); return '%.1f (%.1f) %.0f' % (np.median(v), np.percentile(v, 90), v.max())
res = []
for nm in names:
    e = [r[nm][0] for r in RAMP]
    ex14 = sum(r[nm][1] <= 0.2 for r in hard); ok40 = sum(r[nm][1] <= 0.2 for r in RAMP)
    res.append((np.percentile(e, 90), nm, q(e), ex14, ok40))
res.sort()
for p, nm, s, a, b in res[:int(sys.argv[1]) if len(sys.argv) > 1 else 999]:
    print('%-55s %-22s 14:%2d 40:%2d' % (nm, s, a, b))
