# One-row restarts at isolated recorded contacts, compared FOUR rows on, grouped by patch.
# usage: PYTHONPATH=<module dir> python3 restart.py OUT.jsonl [values comma-separated]
import sys, os, json, glob, numpy as np
sys.path.insert(0, '/work/wt/tail30/scripts')
import rlfit, mesh_patches, ball_classes as bc
root = '/work/shared/datasets/lobot'
mesh = mesh_patches.Mesh(mesh_patches.read_triangles(os.path.join(root, 'meshes', 'pitch.dat')))
vals = None
if len(sys.argv) > 2: vals = np.array([float(s) for s in sys.argv[2].split(',')])
m = rlfit.Model('ball', values=vals) if vals is not None else rlfit.Model('ball')
print(m.coefficients, file=sys.stderr)
H = 4
out = open(sys.argv[1], 'w')
for path in sorted(glob.glob(root + '/ball_trajectories/episode_*.csv')):
    ep = int(path[-10:-4])
    e = rlfit.read_recording(path)[0]
    t, x, v = e['t_s'], e['x'], e['v']
    dt = e['step_dt_s']
    events, rolling = bc.contacts(mesh, x, v, np.diff(t))
    starts = [ev[0] for ev in events]
    for i, (k, j, patch) in enumerate(events):
        if j > k + 2 or k + H >= len(t): continue
        prev_end = events[i - 1][1] if i > 0 else -10
        nxt = events[i + 1][0] if i + 1 < len(events) else 10**9
        if prev_end >= k - 2 or nxt <= k + H: continue
        if np.any(rolling[max(0, k - 2):k + H + 1]): continue
        # contact normal: from the closest surface point at the row nearest the contact
        p = x[j + 1] if j + 1 < len(x) else x[j]
        f = mesh.nearest(x[k + 1])
        if patch == 'floor' or f is None or x[k + 1][2] < f[0]:
            n = np.array([0, 0, 1.0]); dist = x[k + 1][2]
        else:
            n = (x[k + 1] - f[1]) / f[0]; dist = f[0]
        d = dt[k]
        tr = m.predict(e['states'][k], H * d + 1e-9, dt_s=d)
        o = tr[H, 1:]; rec = e['states'][k + H]
        dv = o[3:6] - rec[3:6]
        vin_n = float(v[k] @ n)
        out.write(json.dumps(dict(ep=ep, k=int(k), j=int(j), patch=patch, vin_n=vin_n,
            speed=float(np.linalg.norm(v[k])), dist=float(dist),
            dv=float(np.linalg.norm(dv)), dvn=float(dv @ n), dvt=float(np.linalg.norm(dv - (dv @ n) * n)),
            dw=float(np.linalg.norm(o[6:9] - rec[6:9])), dx=float(np.linalg.norm(o[0:3] - rec[0:3])),
            dxn=float((o[0:3] - rec[0:3]) @ n))) + '\n')
