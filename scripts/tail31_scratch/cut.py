# tail31 scratch: tick-clock restarts by replaying the recording cut at a row (the replay's own
# start: BallTicksAroundRow at the cut file's clock origin), before and after the departing contact.
import sys, os, json, numpy as np
import rlfit
root = '/work/shared/datasets/lobot'
rs = [json.loads(l) for l in open('/tmp/tail31/eps.jsonl')]
lines = {}
jobs = []  # (ep, tag, start)
for r in rs:
    ep = r['ep']
    jobs.append((ep, 'full', 0))
    if r.get('c_row') is None: continue
    for tag, s in (('pre3', max(0, r['c_row'] - 3)), ('pre10', max(0, r['c_row'] - 10)), ('post', r['c_end'] + 2), ('post4', r['c_end'] + 4)):
        jobs.append((ep, tag, s))
res = {}
for ep, tag, s in jobs:
    src = os.path.join(root, 'ball_trajectories', 'episode_%06d.csv' % ep)
    L = open(src).read().splitlines()
    d = '/tmp/tail31/cut/%s_%d/ball_trajectories' % (tag, ep)
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, 'episode_%06d.csv' % ep)
    open(p, 'w').write('\n'.join(L[s:]) + '\n')
    out = rlfit.replay('ball', [p], data_root=root)
    e = out['episodes'][0]
    pred = np.asarray(e['predicted'])
    rec = rlfit.read_recording(p)[0]['states']
    dx = np.linalg.norm(pred[:, 0:3] - rec[:, 0:3], axis=1)
    dv = np.linalg.norm(pred[:, 3:6] - rec[:, 3:6], axis=1)
    big = dv > 20
    ks = [i for i in range(len(big) - 3) if big[i:i + 4].all()]
    res.setdefault(ep, {})[tag] = dict(s=s, dx1=float(dx[min(61, len(dx) - 1)]), last=float(dx[-1]), dep=(s + ks[0]) if ks else None, dxs=dx.tolist())
    print(ep, tag, s, res[ep][tag]['dx1'], res[ep][tag]['last'], res[ep][tag]['dep'], flush=True)
json.dump(res, open('/tmp/tail31/cut.json', 'w'))
