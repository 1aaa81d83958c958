# Rolling (pressed) rows by patch: recorded gap to the mesh vs load; and the model's gap four rows
# after a one-row restart from a rolling row (same mesh distance), new law.
import sys, os, json, glob, numpy as np
sys.path.insert(0, '/work/wt/tail30/scripts')
import rlfit, mesh_patches as mp
root = '/work/shared/datasets/lobot'
mesh = mp.Mesh(mp.read_triangles(os.path.join(root, 'meshes', 'pitch.dat')))
vals = np.array([float(s) for s in sys.argv[2].split(',')]) if len(sys.argv) > 2 else None
m = rlfit.Model('ball', values=vals) if vals is not None else rlfit.Model('ball')
R = float(sys.argv[3]) if len(sys.argv) > 3 else 93.15
H = 4
out = open(sys.argv[1], 'w')
def dist(p):
    h = mesh.nearest(p)
    fl = p[2]
    if h is None or fl <= h[0]: return fl, 'floor', np.array([0, 0, 1.0])
    return h[0], mesh.labels[h[2]], (p - h[1]) / h[0]
for path in sorted(glob.glob(root + '/ball_trajectories/episode_*.csv')):
    ep = int(path[-10:-4]); e = rlfit.read_recording(path)[0]
    x, v, dt = e['x'], e['v'], e['step_dt_s']
    n = len(x)
    info = [None] * n
    for k in range(1, n - 1):
        d, pa, nn = dist(x[k])
        if d > R + 3: continue
        vm, v0, vp = v[k-1] @ nn, v[k] @ nn, v[k+1] @ nn
        load = ((vp - vm) - mp.GRAVITY_Z * nn[2] * (dt[k-1] + dt[k])) / (dt[k-1] + dt[k])
        info[k] = (d, pa, nn, v0, load)
    for k in range(2, n - H - 2, 3):
        ok = all(info[j] is not None and abs(info[j][3]) < 3 and info[j][4] > 300 for j in range(k - 1, k + H + 2))
        if not ok: continue
        d, pa, nn, v0, load = info[k + H]
        tr = m.predict(e['states'][k], H * dt[k] + 1e-9, dt_s=dt[k])
        dm, pam, _ = dist(tr[H, 1:4])
        vt = np.linalg.norm(v[k + H] - (v[k + H] @ nn) * nn)
        out.write(json.dumps(dict(ep=ep, k=k, patch=pa, gap=d - R, model_gap=dm - R, load=float(load), vt=float(vt), ng=float(-mp.GRAVITY_Z * nn[2]))) + '\n')
