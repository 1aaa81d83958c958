import os, numpy as np, rlfit
root = '/work/shared/datasets/lobot'
src = os.path.join(root, 'ball_trajectories', 'episode_000082.csv')
L = open(src).read().splitlines()
S = rlfit.read_recording(src)[0]['states']
for k in range(240, 248): print(k, np.round(S[k, :6], 2))
for s in (0, 240, 242, 243, 244, 245, 246):
    d = '/tmp/tail31/cut/e82_%d/ball_trajectories' % s; os.makedirs(d, exist_ok=True)
    p = os.path.join(d, 'episode_000082.csv'); open(p, 'w').write('\n'.join(L[s:]) + '\n')
    pred = np.asarray(rlfit.replay('ball', [p], data_root=root)['episodes'][0]['predicted'])
    dx = np.linalg.norm(pred[:, 0:3] - S[s:, 0:3], axis=1)
    h = 244 + 30 - s
    print('cut', s, '|dx| at row 274 (0.5 s after 244): %.2f' % dx[h], 'last %.2f' % dx[-1], 'pred row 245 vz' , round(float(pred[245 - s, 5]), 1) if s <= 245 else '')
