# Episodes worse at the last row (cand > 2x base and > 20 uu); first row open-loop |dv| > 20 and patch.
import csv, sys, os, numpy as np
sys.path.insert(0, '/work/wt/tail30/scripts')
import mesh_patches
root = '/work/shared/datasets/lobot'
mesh = mesh_patches.Mesh(mesh_patches.read_triangles(os.path.join(root, 'meshes', 'pitch.dat')))
rows = list(csv.DictReader(open('/tmp/tail30/episodes.csv')))
def load(folder, ep):
    a = np.genfromtxt(os.path.join(folder, ep), delimiter=',', names=True, dtype=None, encoding=None)
    return a
def patch(p):
    f = mesh.nearest(p)
    best, lab = p[2], 'floor'
    if f is not None and f[0] < best: best, lab = f[0], mesh.labels[f[2]]
    return lab, best
def depart(folder, ep):
    a = load(folder, ep)
    v = np.stack([a['vx'], a['vy'], a['vz']], 1); rv = np.stack([a['rec_vx'], a['rec_vy'], a['rec_vz']], 1)
    x = np.stack([a['rec_x'], a['rec_y'], a['rec_z']], 1)
    dv = np.linalg.norm(v - rv, axis=1)
    big = dv > 20
    ks = [i for i in range(len(big) - 3) if big[i:i+4].all()]
    if not ks: return None
    k = ks[0]
    lab, d = patch(x[k]); lab2, d2 = patch(x[max(k-1, 0)])
    return k, float(a['t_s'][k]), lab, d, lab2
sel = []
for r in rows:
    b, c = float(r['base_last']), float(r['cand_last'])
    if c > 2*b and c > 20: sel.append(r)
print(len(sel), 'worse at the last row (>2x, >20)')
for r in sel:
    ep = r['episode']
    db = depart('/tmp/push30/cv/folds4/base', ep); dc = depart('/tmp/push30/cv/folds4/candidate', ep)
    print(ep, r['class_last'], 'base', r['base_last'], 'cand', r['cand_last'], 'base dep', db and (db[0], round(db[1],2), db[2]), 'cand dep', dc and (dc[0], round(dc[1],2), dc[2], round(dc[3]-93.15,1), dc[4]))
sel2 = [r for r in rows if float(r['base_last']) > 2*float(r['cand_last']) and float(r['base_last']) > 20]
print(len(sel2), 'better at the last row (>2x, >20)')
