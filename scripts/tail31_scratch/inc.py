import sys, os, json, numpy as np
import rlfit
root = '/work/shared/datasets/lobot'
arena = rlfit.Arena(root); R = 93.1864; TICK = 1 / 120.
rs = {json.loads(l)['ep']: json.loads(l) for l in open('eps.jsonl')}
def first_touch(x, v):
    p = np.array(x, float); vv = np.array(v, float)
    for it in range(14):
        col = arena.collide(p, R)
        if col['hit']: return col, it, vv
        vv = vv * np.exp(-0.0304592 * TICK); vv[2] -= 650.0 * TICK; p = p + vv * TICK
    return None, None, None
for ep in sorted(rs):
    r = rs[ep]
    if r.get('c_row') is None: continue
    a = np.genfromtxt('/tmp/rampt30/cv_eq/episode_%06d.csv' % ep, delimiter=',', names=True, dtype=None, encoding=None)
    k = r['c_row']
    P = [a['x'][k], a['y'][k], a['z'][k]]; V = [a['vx'][k], a['vy'][k], a['vz'][k]]
    Q = [a['rec_x'][k], a['rec_y'][k], a['rec_z'][k]]; W = [a['rec_vx'][k], a['rec_vy'][k], a['rec_vz'][k]]
    c1, t1, v1 = first_touch(P, V); c2, t2, v2 = first_touch(Q, W)
    if c1 is None or c2 is None: print(ep, 'no touch', c1 is None, c2 is None); continue
    ang = np.degrees(np.arccos(np.clip(np.dot(c1['normal'], c2['normal']), -1, 1)))
    print(ep, 'open loop: tick %d tris %d depth %.2f | recorded: tick %d tris %d depth %.2f | normal angle %.2f deg | dx at row %.2f' % (
        t1, c1['triangles'], c1['depth'], t2, c2['triangles'], c2['depth'], ang, np.linalg.norm(np.subtract(P, Q))))
