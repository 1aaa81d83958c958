# Scratch (subset31): NOTES table 1 (the 40 side/corner ramp bounces).
import pickle, numpy as np
rows = pickle.load(open('/tmp/subset31/rules.pkl', 'rb'))
RAMP = [r for r in rows if r['patch'] in ('side ramp', 'corner ramp')]
A = 'all: eq every touching'; hard = [r for r in RAMP if r[A][1] > 0.2]
SEL = [('today: eq 4 deepest', 'today: equal weights, 4 deepest (proxy)'), (A, 'every touching triangle, equal weights'),
       ('deepest only', 'deepest triangle only'), ('one per distinct face', 'one per distinct face'),
       ('(c) face-interior only', '(c) face-interior contacts only'),
       ('(c) raw Bullet normals (edge: closest-feature dir)', '(c) Bullet raw normals (edge/vertex: closest-feature direction)'),
       ('(b) deepest per piece', '(b) deepest contact per mesh piece'), ('(b) eq, 4 deepest per piece', '(b) 4 deepest per mesh piece'),
       ('(a) file thr0 ', '(a) cap 4 (sortCachedPoints), no merge, file order'),
       ('(a) bvh_own thr0 ', '(a) cap 4, no merge, BVH order'),
       ('(a) file thr1 pA', '(a) manifold 1 uu, file order'), ('(a) file_rev thr1 pA', '(a) manifold 1 uu, file order reversed'),
       ('(a) deep_first thr1 pA', '(a) manifold 1 uu, deepest first'), ('(a) shallow_first thr1 pA', '(a) manifold 1 uu, shallowest first'),
       ('(a) bvh_own thr1 pA', '(a) manifold 1 uu, BVH order (own copy)'), ('(a) bvh_shared thr1 pA', '(a) manifold 1 uu, BVH order (shared by mirrored copies)'),
       ('(a) bvh_own thr1 pA per-piece', '(a) manifold 1 uu per mesh piece, BVH order'),
       ('(a) bvh_own thr2 pA per-piece', '(a) manifold 2 uu per mesh piece, BVH order'),
       ('(a) shallow_first thr1 pA per-piece', '(a) manifold 1 uu per mesh piece, shallowest first'),
       ('(d) deep_first merge1 pA nocap', '(d) merged within 1 uu (sphere points), no cap, deepest first'),
       ('(d) file merge1 pA nocap', '(d) merged within 1 uu, no cap, file order'),
       ('(d) deep_first merge2 pA nocap', '(d) merged within 2 uu, no cap, deepest first'),
       ('(d) deep_first merge5 pA nocap', '(d) merged within 5 uu, no cap, deepest first'),
       ('spec: eq within R+1', 'every triangle within R + 1 uu (speculative points)')]
def q(v):
    v = np.array(v); return '%.1f (%.1f) %.0f' % (np.median(v), np.percentile(v, 90), v.max())
print('| rule | side ramp (18) | corner ramp (22) | all 40 | of the 14 | of 40 within 0.2 deg |')
print('|---|---|---|---|---|---|')
for k, lab in SEL:
    print('| %s | %s | %s | %s | %d | %d |' % (lab, q([r[k][0] for r in RAMP if r['patch'] == 'side ramp']),
          q([r[k][0] for r in RAMP if r['patch'] == 'corner ramp']), q([r[k][0] for r in RAMP]),
          sum(r[k][1] <= 0.2 for r in hard), sum(r[k][1] <= 0.2 for r in RAMP)))
