# Scratch (subset31): chosen rules per patch group.
import pickle, numpy as np
rows = pickle.load(open('/tmp/subset31/rules.pkl', 'rb'))
G = {'side ramp': 'side ramp', 'corner ramp': 'corner ramp', 'back ramp': 'back ramp', 'corner curve': 'corner curve',
     'ceiling edge': 'ceiling edge'}
grp = lambda p: G.get(p, 'goal (all)' if p.startswith('goal') else p)
SEL = ['today: eq 4 deepest', 'all: eq every touching', 'model-like all (merge 0.01, tie file)', 'deepest only',
       '(c) raw Bullet normals (edge: closest-feature dir)', '(b) eq, 4 deepest per piece', '(a) file thr0 ',
       '(a) bvh_own thr1 pA', '(a) bvh_own thr2 pA per-piece', '(a) shallow_first thr1 pA per-piece',
       '(d) deep_first merge1 pA nocap', '(d) deep_first merge2 pA nocap']
def q(v):
    v = np.array(v); return '%.1f (%.1f) %.0f' % (np.median(v), np.percentile(v, 90), v.max()) if len(v) else '-'
groups = ['side ramp', 'corner ramp', 'back ramp', 'corner curve', 'goal (all)', 'ceiling edge']
sets = {g: [r for r in rows if grp(r['patch']) == g] for g in groups}
sets['ramps (40)'] = sets['side ramp'] + sets['corner ramp']
sets['all 76'] = rows
print('counts', {g: len(s) for g, s in sets.items()})
print('ntri', {g: q([r['ntri'] for r in s]) for g, s in sets.items()})
order = ['ramps (40)', 'back ramp', 'corner curve', 'goal (all)', 'ceiling edge', 'all 76']
print('| rule | ' + ' | '.join('%s (%d)' % (g, len(sets[g])) for g in order) + ' | within 0.2 deg, all 76 |')
print('|---' * (len(order) + 2) + '|')
for nm in SEL:
    print('| %s | ' % nm + ' | '.join(q([r[nm][0] for r in sets[g]]) for g in order) +
          ' | %d |' % sum(r[nm][1] <= 0.2 for r in rows))
