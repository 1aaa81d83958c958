# Scratch (subset31): the 14 ramp bounces 'every touching triangle' misses, and the goal bounces, per rule.
import pickle, numpy as np
rows = pickle.load(open('/tmp/subset31/rules.pkl', 'rb'))
recs = {(r['ep'], r['k']): r for r in pickle.load(open('/tmp/subset31/bounces.pkl', 'rb'))}
A = 'all: eq every touching'
S = ['today: eq 4 deepest', A, '(a) bvh_own thr2 pA per-piece', '(a) bvh_own thr1 pA per-piece', '(a) shallow_first thr1 pA per-piece',
     '(a) deep_first thr1 pA', '(b) eq, 4 deepest per piece', '(c) raw Bullet normals (edge: closest-feature dir)']
print('ep row patch ntri npieces fit_res | ' + ' | '.join(s[:28] for s in S))
for r in rows:
    hard = r['patch'] in ('side ramp', 'corner ramp') and r[A][1] > 0.2
    bad = any(r[s][0] > 50 for s in S[2:5]) and r['patch'] in ('side ramp', 'corner ramp')
    if hard or bad or r['patch'].startswith('goal') or r['patch'] == 'back ramp':
        rc = recs[(r['ep'], r['k'])]
        npc = len({t for d, t, *_ in rc['near'] if d < 93.1864})
        print(r['ep'], r['k'], r['patch'][:12], r['ntri'], '%.2f' % rc['fit_res'], ('H' if hard else ' '), ' '.join('%6.1f/%4.2f/%d' % r[s] for s in S))
