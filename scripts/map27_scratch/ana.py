import sys, json, numpy as np, collections
rows = [json.loads(l) for l in open(sys.argv[1])]
sk = [r for r in rows if 'skip' in r]; rows = [r for r in rows if 'skip' not in r]
def ang(a, b): return float(np.degrees(np.arccos(np.clip(np.dot(a, b), -1, 1))))
def mp(x): x = np.asarray(x, float); return f"{np.median(x):.1f} ({np.percentile(x, 90):.1f})" if len(x) else "-"
def patch(r):
    x = np.array(r['x0']); fs = np.array([f['face'] for f in r['faces']])
    if abs(x[1]) > 5120: return 'goal'
    if x[2] > 1800: return 'ceiling'
    h = fs[:, :2]; hn = np.linalg.norm(h, axis=1)
    if hn.max() < 0.02: return 'floor'
    i = np.argmax(hn); a = np.degrees(np.arctan2(abs(h[i, 1]), abs(h[i, 0])))
    lowz = fs[:, 2].min()
    kind = 'side' if a < 20 else ('back' if a > 70 else 'corner')
    if lowz < 0.2: return kind + ' wall'
    return kind + (' ramp' if kind != 'corner' else ' curve')
print(f"bounces {len(rows)} (+{len(sk)} skipped)")
for r in rows:
    r['patch'] = patch(r); r['seam'] = len(r['faces']) >= 2
    r['straddle'] = any(0.1 < f < 0.9 for f in r['frac'])
single = [r for r in rows if not r['seam']]; seam = [r for r in rows if r['seam']]
print(f"single-facet {len(single)}, seam {len(seam)}")
# 1. calibration on single facets
print("\n## single facet: angle(fit, face) deg, |dv| today, |dv| fit, by patch")
by = collections.defaultdict(list)
for r in single: by[r['patch']].append(r)
for p, rs in sorted(by.items()):
    a = [ang(r['nfit'], r['faces'][0]['face']) for r in rs]
    print(f"{p:14s} n={len(rs):4d} angle {mp(a)} max {max(a):.1f}; dv today {mp([r['e_today'][0] for r in rs])} fit {mp([r['e_fit'][0] for r in rs])}; straddle {sum(r['straddle'] for r in rs)}")
for st in [False, True]:
    rs = [r for r in single if r['straddle'] == st]
    a = [ang(r['nfit'], r['faces'][0]['face']) for r in rs]
    print(f"  straddle={st} n={len(rs)} angle {mp(a)}  dv today {mp([r['e_today'][0] for r in rs])}")
# 2. seam
print("\n## seam: |dv| uu/s median (p90): today, avg, phong, fit; which of today/avg/phong is closest to fit")
def s_par(r):
    t = np.array(r['ntoday']); a = np.array(r['avg']); f = np.array(r['nfit'])
    d = a - t; return float((f - t) @ d / (d @ d)) if d @ d > 1e-10 else float('nan')
by = collections.defaultdict(list)
for r in seam: by[r['patch']].append(r)
for p, rs in sorted(by.items()) + [('ALL seam', seam)]:
    near = collections.Counter()
    for r in rs:
        c = {'today': ang(r['nfit'], r['ntoday']), 'avg': ang(r['nfit'], r['avg']), 'phong': ang(r['nfit'], r['phong']),
             'face': min(ang(r['nfit'], f['face']) for f in r['faces'])}
        near[min(c, key=c.get)] += 1
    sp = [s_par(r) for r in rs]; sp = [x for x in sp if x == x]
    print(f"{p:14s} n={len(rs):3d} today {mp([r['e_today'][0] for r in rs])} avg {mp([r['e_avg'][0] for r in rs])} phong {mp([r['e_phong'][0] for r in rs])} fit {mp([r['e_fit'][0] for r in rs])} | nearest {dict(near)} | s(today=0,avg=1) {mp(sp)} q10..q90 {np.percentile(sp,10):.2f}..{np.percentile(sp,90):.2f}")
    print(f"{'':14s} angle fit-today {mp([ang(r['nfit'], r['ntoday']) for r in rs])} fit-avg {mp([ang(r['nfit'], r['avg']) for r in rs])} fit-phong {mp([ang(r['nfit'], r['phong']) for r in rs])} fit-nearestface {mp([min(ang(r['nfit'], f['face']) for f in r['faces']) for r in rs])} today-avg {mp([ang(r['ntoday'], r['avg']) for r in rs])}")
print("\n## all bounces |dv| median (p90): today", mp([r['e_today'][0] for r in rows]), "avg", mp([r['e_avg'][0] for r in rows]), "phong", mp([r['e_phong'][0] for r in rows]), "fit", mp([r['e_fit'][0] for r in rows]))
print("   |dw| rad/s today", np.median([r['e_today'][1] for r in rows]), "fit", np.median([r['e_fit'][1] for r in rows]))
# facet pair consistency
print("\n## seam by facet pair (the two deepest distinct faces' n_z, rounded; symmetric sides merged)")
key = collections.defaultdict(list)
for r in seam:
    fz = tuple(sorted(round(f['face'][2], 3) for f in r['faces'][:2]))
    key[(r['patch'], fz)].append(r)
for k, rs in sorted(key.items(), key=lambda kv: -len(kv[1])):
    if len(rs) < 2: continue
    sp = [s_par(r) for r in rs]
    win = sum(r['e_avg'][0] < r['e_today'][0] for r in rs)
    print(f"{k[0]:12s} {k[1]} n={len(rs):3d} avg better {win:3d}; s {' '.join(f'{x:.2f}' for x in sorted(sp))}")
print("\n## single facet, not floor: fitted vs face normal: d(n_z) (fit - face) and horizontal turn (deg), phong vs face |dv|")
for p in sorted(set(r['patch'] for r in single)):
    if p == 'floor': continue
    rs = [r for r in single if r['patch'] == p]
    dz = [r['nfit'][2] - r['faces'][0]['face'][2] for r in rs]
    print(f"{p:14s} n={len(rs):3d} dnz median {np.median(dz):+.4f} q10 {np.percentile(dz,10):+.4f} q90 {np.percentile(dz,90):+.4f}; dv today {mp([r['e_today'][0] for r in rs])} phong {mp([r['e_phong'][0] for r in rs])}; phong closer to fit than face in {sum(ang(r['nfit'], r['phong']) < ang(r['nfit'], r['faces'][0]['face']) for r in rs)}")
