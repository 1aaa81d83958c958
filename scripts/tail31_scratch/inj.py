# restart on the tick clock from the OPEN LOOP's state at row c-3 (the cut file's first row replaced
# by cv_eq's prediction there): does the departure come from the incoming state's error?
import os, json, numpy as np
import rlfit
root = '/work/shared/datasets/lobot'
rs = {json.loads(l)['ep']: json.loads(l) for l in open('eps.jsonl')}
cu = {int(k): v for k, v in json.load(open('cut.json')).items()}
for ep in sorted(rs):
    r = rs[ep]
    if r.get('c_row') is None: continue
    s = cu[ep]['pre3']['s']
    a = np.genfromtxt('/tmp/rampt30/cv_eq/episode_%06d.csv' % ep, delimiter=',', names=True, dtype=None, encoding=None)
    L = open(os.path.join(root, 'ball_trajectories', 'episode_%06d.csv' % ep)).read().splitlines()
    f = [q.strip() for q in L[s].split(',')]
    for i, nm in zip(range(1, 7), ('x', 'y', 'z', 'vx', 'vy', 'vz')): f[i] = '%.6f' % a[nm][s]
    for i, nm in zip(range(10, 13), ('wx', 'wy', 'wz')): f[i] = '%.6f' % a[nm][s]
    d = '/tmp/tail31/cut/inj_%d/ball_trajectories' % ep; os.makedirs(d, exist_ok=True)
    p = os.path.join(d, 'episode_%06d.csv' % ep)
    open(p, 'w').write('\n'.join([', '.join(f)] + L[s + 1:]) + '\n')
    pred = np.asarray(rlfit.replay('ball', [p], data_root=root)['episodes'][0]['predicted'])
    rec = rlfit.read_recording(os.path.join(root, 'ball_trajectories', 'episode_%06d.csv' % ep))[0]['states'][s:]
    dx = np.linalg.norm(pred[:, 0:3] - rec[:, 0:3], axis=1); dv = np.linalg.norm(pred[:, 3:6] - rec[:, 3:6], axis=1)
    big = dv > 20; ks = [i for i in range(len(big) - 3) if big[i:i + 4].all()]
    print(ep, 'row', s, 'start dx %.2f' % dx[0], 'inj: 1s %.1f last %.1f dep %s' % (dx[min(61, len(dx) - 1)], dx[-1], s + ks[0] if ks else None),
          '| recorded start: 1s %.1f last %.1f dep %s | open loop dep %d last %.1f' % (cu[ep]['pre3']['dx1'], cu[ep]['pre3']['last'], cu[ep]['pre3']['dep'], r['dep_row'], r['last']))
