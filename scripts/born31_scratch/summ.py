import json, numpy as np, csv
def last(path):
    with open(path) as f:
        r = list(csv.DictReader(f))
    a = r[-1]; return float(np.linalg.norm([float(a[k]) - float(a['rec_' + k]) for k in 'xyz']))
D = [json.loads(l) for l in open(__import__('sys').argv[1]) if l.startswith('{')]
cv = {d['ep']: last('/tmp/rampt30/cv_eq/episode_%06d.csv' % d['ep']) for d in D}
rep = {d['ep']: last('/tmp/born31/rep/episode_%06d.csv' % d['ep']) for d in D}
ol = np.array([d['open_last'] for d in D]); lf = np.array([d['left'] for d in D]); rp = np.array([rep[d['ep']] for d in D]); c = np.array([cv[d['ep']] for d in D])
q = lambda x: 'median %.2f p90 %.1f max %.1f >60: %d' % (np.median(x), np.percentile(x, 90), x.max(), (x > 60).sum())
print('n', len(D)); print('crossval folds4 (rampt30):', q(c)); print('rlsim replay results/ball:', q(rp)); print('python open loop:', q(ol)); print('left (perfect contacts):', q(lf))
print('python vs rlsim open loop |diff| max', np.abs(ol - rp).max(), 'median', np.median(np.abs(ol - rp)), 'n diff>1:', (np.abs(ol - rp) > 1).sum())
big = sorted([d for d in D if cv[d['ep']] > 50], key=lambda d: -cv[d['ep']])
for d in big:
    print(d['ep'], 'cv %.1f rep %.1f py %.1f left %.1f str %d missed %s' % (cv[d['ep']], rep[d['ep']], d['open_last'], d['left'], d['straddled'], d['missed']))
print('episodes with any miss', sum(1 for d in D if d['missed']), 'contacts', sum(d['contacts'] for d in D), 'missed', sum(len(d['missed']) for d in D))
print('left>60:', [(d['ep'], d['left']) for d in D if d['left'] > 60])
