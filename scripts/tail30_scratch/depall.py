import csv, sys, os, numpy as np
sys.path.insert(0, '/work/wt/tail30/scripts')
import mesh_patches
root = '/work/shared/datasets/lobot'
mesh = mesh_patches.Mesh(mesh_patches.read_triangles(os.path.join(root, 'meshes', 'pitch.dat')))
rows = list(csv.DictReader(open('/tmp/tail30/episodes.csv')))
def patch(p):
    f = mesh.nearest(p); best, lab = p[2], 'floor'
    if f is not None and f[0] < best: best, lab = f[0], mesh.labels[f[2]]
    return lab if best < 93.15 + 40 else 'none'
res = {}
for r in rows:
    a = np.genfromtxt(os.path.join('/tmp/push30/cv/folds4/candidate', r['episode']), delimiter=',', names=True)
    dv = np.linalg.norm(np.stack([a['vx']-a['rec_vx'], a['vy']-a['rec_vy'], a['vz']-a['rec_vz']], 1), axis=1)
    big = dv > 20
    ks = [i for i in range(len(big) - 3) if big[i:i+4].all()]
    lab = patch(np.array([a['rec_x'][ks[0]], a['rec_y'][ks[0]], a['rec_z'][ks[0]]])) if ks else 'never'
    res[r['episode']] = (lab, float(r['cand_last']), r['class_last'])
last = np.array([v[1] for v in res.values()])
order = sorted(res, key=lambda e: res[e][1])
n = len(order)
for name, eps in (('40-60th pct', order[int(0.4*n):int(0.6*n)]), ('worst 26', order[int(0.9*n):]), ('all', order)):
    c = {}
    for e in eps: c[res[e][0]] = c.get(res[e][0], 0) + 1
    print(name, len(eps), sorted(c.items(), key=lambda x: -x[1]))
cur = [v for v in res.values() if v[2] == 'curve']
print('curve class', len(cur), 'last <= 6:', sum(v[1] <= 6 for v in cur), 'never departs:', sum(v[0]=='never' for v in cur))
print('all: last <= 6:', sum(last <= 6), 'of', n)
