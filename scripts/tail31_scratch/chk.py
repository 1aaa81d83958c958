import sys, os, json, numpy as np
sys.path.insert(0, '/work/wt/tail31/scripts')
import rlfit, mesh_patches, ball_classes as bc
root = '/work/shared/datasets/lobot'
mesh = mesh_patches.Mesh(mesh_patches.read_triangles(os.path.join(root, 'meshes', 'pitch.dat')))
rs = [json.loads(l) for l in open('eps.jsonl')]
def dist(p):
    f = mesh.nearest(p); best, lab = p[2], 'floor'
    if f is not None and f[0] < best: best, lab = f[0], mesh.labels[f[2]]
    return best, lab
for r in rs:
    e = rlfit.read_recording(os.path.join(root, 'ball_trajectories', 'episode_%06d.csv' % r['ep']))[0]
    S = e['states']; dt = e['step_dt_s']
    # position step vs trapezoid of velocities (teleport / glitch check)
    res = np.linalg.norm(S[1:, 0:3] - S[:-1, 0:3] - 0.5 * (S[1:, 3:6] + S[:-1, 3:6]) * dt[:, None], axis=1)
    # free residual away from the mesh
    fr = bc.free_residual(S[:, 3:6], dt)
    d = np.array([dist(p)[0] for p in S[:, 0:3]])
    away = (d[:-1] > 93.2 + 10) & (d[1:] > 93.2 + 10)
    i = int(np.argmax(np.where(away, np.nan_to_num(fr), 0)))
    print(r['ep'], 'pos-step resid max %.2f at %d' % (res.max(), res.argmax()), '| free resid >10 uu from mesh: max %.2f at row %d (dist %.1f)' % (np.nan_to_num(fr)[i] if away.any() else 0, i, d[i]),
          '| |w| max %.2f' % np.linalg.norm(S[:, 6:9], axis=1).max())
r = [x for x in rs if x['ep'] == 62][0]
e = rlfit.read_recording(os.path.join(root, 'ball_trajectories', 'episode_000062.csv'))[0]
S = e['states']
for k in range(350, 360):
    print(k, np.round(S[k, :6], 1), np.round(dist(S[k, :3])[0], 1), dist(S[k, :3])[1], round(float(bc.free_residual(S[:, 3:6], e['step_dt_s'])[k]), 1))
