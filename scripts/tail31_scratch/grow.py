import sys, os, json, numpy as np
sys.path.insert(0, '/work/wt/tail31/scripts')
import mesh_patches, ball_classes as bc
root = '/work/shared/datasets/lobot'
mesh = mesh_patches.Mesh(mesh_patches.read_triangles(os.path.join(root, 'meshes', 'pitch.dat')))
for ep in [0, 48, 156, 164, 58, 62, 266, 50, 182, 153, 333, 169]:
    a = np.genfromtxt('/tmp/rampt30/cv_eq/episode_%06d.csv' % ep, delimiter=',', names=True, dtype=None, encoding=None)
    x = np.stack([a['x'], a['y'], a['z']], 1); rx = np.stack([a['rec_x'], a['rec_y'], a['rec_z']], 1)
    v = np.stack([a['vx'], a['vy'], a['vz']], 1); rv = np.stack([a['rec_vx'], a['rec_vy'], a['rec_vz']], 1)
    dx = np.linalg.norm(x - rx, axis=1); dv = np.linalg.norm(v - rv, axis=1)
    ev, _ = bc.contacts(mesh, rx, rv, np.diff(a['t_s']))
    out = []
    near = np.zeros(len(dx), bool)
    for e0, e1, _ in ev: near[max(0, e0 - 2):e1 + 4] = True
    for thr in (1.0, 3.0):
        ok = (dx > thr) & ~near
        i = int(np.argmax(ok)) if ok.any() else None
        c = [e for e in ev if i is not None and e[0] <= i]
        out.append('dx>%g off contacts: row %s after %s' % (thr, i, (c[-1][2] + '@' + str(c[-1][0]) + ' vn %.0f' % rv[c[-1][0]][2]) if c else '-'))
    for thr in (1, 3):
        i = int(np.argmax(dv > thr)) if (dv > thr).any() else None
        if i is None: out.append('dv>%g never' % thr); continue
        c = [e for e in ev if e[0] <= i]
        out.append('dv>%g row %d (after %s, dx %.2f)' % (thr, i, (c[-1][2] + '@' + str(c[-1][0])) if c else '-', dx[i]))
    print(ep, '; '.join(out), '| dx at rows 100/200/300/400/last:', [round(float(dx[min(k, len(dx)-1)]), 1) for k in (100, 200, 300, 400, len(dx) - 1)], 'dv max %.1f' % dv.max())
