import os, numpy as np, rlfit, json
root = '/work/shared/datasets/lobot'
arena = rlfit.Arena(root)
for ep, k in ((306, 54), (149, 288), (164, 227), (266, 222), (0, 238), (333, 200), (333, 250), (169, 513), (169, 560), (29, 357)):
    S = rlfit.read_recording(os.path.join(root, 'ball_trajectories', 'episode_%06d.csv' % ep))[0]['states']
    c = arena.collide(S[k, :3], 93.1864 + 10)
    print(ep, k, np.round(S[k, :6], 1), 'within R+10: tris', c['triangles'], 'normal', np.round(c['normal'], 3), 'depth %.1f' % c['depth'])
