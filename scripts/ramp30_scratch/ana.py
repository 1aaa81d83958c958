import json, sys, numpy as np, collections
rows = [json.loads(l) for l in open(sys.argv[1])]
K = ['today', 'feature', 'manifold', 'circle', 'deepest', 'first', 'fit']
q = lambda a, p: float(np.percentile(a, p)) if len(a) else float('nan')
by = collections.defaultdict(list)
for r in rows: by[r['patch']].append(r)
by['all'] = rows
for p, rs in by.items():
    print(f"== {p} n={len(rs)}  multi-tri {sum(r['ntri']>1 for r in rs)} multi-face {sum(r['nfaces']>1 for r in rs)} first avail {sum(r['cands']['first'] is not None for r in rs)}")
    for k in K:
        dv = [r['errs'][k][0] for r in rs if r['errs'].get(k)]
        dw = [r['errs'][k][1] for r in rs if r['errs'].get(k)]
        a = [r['ang'][k] for r in rs if r['ang'].get(k) is not None]
        print(f"  {k:9s} n={len(dv):3d} |dv| {q(dv,50):7.2f} ({q(dv,90):7.2f}) |dw| {q(dw,50):.3f} ({q(dw,90):.3f})" + (f"  ang fit {q(a,50):.2f} ({q(a,90):.2f})" if a else ''))
    near = collections.Counter()
    for r in rs:
        c = {k: r['ang'][k] for k in ['feature', 'manifold', 'circle', 'deepest', 'first'] if r['ang'].get(k) is not None}
        near[min(c, key=c.get)] += 1
    print('  nearest:', dict(near))
