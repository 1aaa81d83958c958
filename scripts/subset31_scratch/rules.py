# Scratch (subset31): candidate subset rules for the touching triangles at each fitted bounce
# (bounces.pkl from extract.py): |dv| at the tick and the angle to the fitted normal per rule.
import pickle, sys, collections
from common import *
recs = pickle.load(open('/tmp/subset31/bounces.pkl', 'rb'))
BULLET_BREAK = 1.0  # uu: gContactBreakingThreshold 0.02 Bullet units x 50 uu

# mesh pieces: pitch.dat's blocks (the game's collision meshes; corners, goals, side ramps and
# ceiling edges are mirrored copies in the same triangle order)
BLOCKS = [(0, 1), (2, 881), (882, 1761), (1762, 2641), (2642, 3521), (3522, 3553), (3554, 3585),
          (3586, 3837), (3838, 4089), (4090, 4090), (4091, 4091), (4092, 6057), (6058, 8023),
          (8024, 8024), (8025, 8025), (8026, 8026), (8027, 8027)]
piece = np.zeros(len(tris), int); local = np.zeros(len(tris), int)
for b, (s, e) in enumerate(BLOCKS):
    piece[s:e + 1] = b; local[s:e + 1] = np.arange(e - s + 1)
GROUP_BASE = {2: 2, 3: 2, 4: 2, 1: 1, 5: 5, 6: 5, 7: 7, 8: 7, 11: 11, 12: 11}


def bvh_order(idx):
    """Leaf order of Bullet's btQuantizedBvh::buildTree over triangles idx (in that order)."""
    cen = 0.5 * (lo[idx] + hi[idx]); leaves = list(idx); cen = list(cen)
    out = []
    def build(s, e):
        n = e - s
        if n == 1: out.append(leaves[s]); return
        C = np.array(cen[s:e]); m = C.mean(0)
        var = ((C - m) ** 2).sum(0) / (n - 1); ax = int(np.argmax(var))
        sv = m[ax]; si = s
        for i in range(s, e):
            if cen[i][ax] > sv:
                leaves[i], leaves[si] = leaves[si], leaves[i]; cen[i], cen[si] = cen[si], cen[i]; si += 1
        rb = n // 3
        if si <= s + rb or si >= e - 1 - rb: si = s + (n >> 1)
        build(s, si); build(si, e)
    sys.setrecursionlimit(10000); build(0, len(leaves)); return out


rank_own = np.zeros(len(tris), int); rank_shared = np.zeros(len(tris), int)
base_rank = {}
for b, (s, e) in enumerate(BLOCKS):
    o = bvh_order(np.arange(s, e + 1))
    for r, t in enumerate(o): rank_own[t] = r
    base_rank[b] = {t - s: r for r, t in enumerate(o)}
for t in range(len(tris)):
    rank_shared[t] = base_rank[GROUP_BASE.get(piece[t], piece[t])][local[t]]


def unitsum(ns): return unit(np.sum(ns, axis=0))


def sort_cached(cache, new):
    """btPersistentManifold::sortCachedPoints (KEEP_DEEPEST_POINT, 3-point areas) on sphere points."""
    maxp = new['dist']; mi = -1
    for i in range(4):
        if cache[i]['dist'] < maxp: mi = i; maxp = cache[i]['dist']
    P = [c['pA'] for c in cache]; a = new['pA']
    res = [0.0] * 4
    if mi != 0: res[0] = np.sum(np.cross(a - P[1], P[3] - P[2]) ** 2)
    if mi != 1: res[1] = np.sum(np.cross(a - P[0], P[3] - P[2]) ** 2)
    if mi != 2: res[2] = np.sum(np.cross(a - P[0], P[3] - P[1]) ** 2)
    if mi != 3: res[3] = np.sum(np.cross(a - P[0], P[2] - P[1]) ** 2)
    return int(np.argmax(np.abs(res)))


def manifold(points, thr, key, cap=4):
    cache = []
    for p in points:
        best, bi = thr * thr, -1
        for i, c in enumerate(cache):
            d2 = float(np.sum((c[key] - p[key]) ** 2))
            if d2 < best: best, bi = d2, i
        if bi >= 0: cache[bi] = p
        elif len(cache) < cap: cache.append(p)
        else: cache[sort_cached(cache, p)] = p
    return cache


def points_of(rec, r_touch=R):
    xc = rec['xc']; pts = []
    for d, t, n, f, q in rec['near']:
        if d < r_touch:
            pts.append(dict(t=t, n=n, f=f, dist=d - R, pA=xc - R * f, pB=q, piece=piece[t],
                            interior=bool(f @ n > 0.99999)))
    return pts


ORDERS = {
    'file': lambda p: p['t'], 'file_rev': lambda p: -p['t'], 'deep_first': lambda p: p['dist'],
    'shallow_first': lambda p: -p['dist'], 'bvh_own': lambda p: (p['piece'], rank_own[p['t']]),
    'bvh_shared': lambda p: (p['piece'], rank_shared[p['t']]),
    'bvh_own_rev': lambda p: (p['piece'], -rank_own[p['t']]),
    'bvh_shared_rev': lambda p: (p['piece'], -rank_shared[p['t']]),
}


def rules_for(rec):
    pts = points_of(rec); out = {}
    deep = sorted(pts, key=lambda p: p['dist'])
    out['today: eq 4 deepest'] = [p['n'] for p in deep[:4]]
    out['all: eq every touching'] = [p['n'] for p in pts]
    out['deepest only'] = [deep[0]['n']]
    faces = {}
    for p in pts: faces.setdefault(tuple(np.round(p['n'], 4)), p['n'])
    out['one per distinct face'] = list(faces.values())
    # (c)
    intr = [p['n'] for p in pts if p['interior']]
    out['(c) face-interior only'] = intr or [p['n'] for p in pts]
    out['(c) raw Bullet normals (edge: closest-feature dir)'] = [p['n'] if p['interior'] else p['f'] for p in pts]
    # (b)
    by = collections.defaultdict(list)
    for p in deep: by[p['piece']].append(p)
    out['(b) deepest per piece'] = [v[0]['n'] for v in by.values()]
    out['(b) eq, 4 deepest per piece'] = [q['n'] for v in by.values() for q in v[:4]]
    # the model's CollideEach: points (on the triangle) within 0.01 uu are one contact, the deeper
    # kept (the first on a tie; visit order: file order, or reversed), then the 4 deepest
    for oname, okey in (('file', ORDERS['file']), ('file_rev', ORDERS['file_rev'])):
        kept = []
        for p in sorted(pts, key=okey):
            hit = [i for i, c in enumerate(kept) if np.sum((c['pB'] - p['pB']) ** 2) <= 1e-4]
            if hit:
                if p['dist'] >= kept[hit[0]]['dist']: continue
                kept.pop(hit[0])
            kept.append(p)
        kept.sort(key=lambda p: p['dist'])
        out['model-like all (merge 0.01, tie %s)' % oname] = [p['n'] for p in kept]
        out['model-like 4 deepest (merge 0.01, tie %s)' % oname] = [p['n'] for p in kept[:4]]
    # (a) manifolds
    for oname, okey in ORDERS.items():
        srt = sorted(pts, key=okey)
        for thr in (0.0, 1.0, 2.0, 5.0):
            for key in ('pA', 'pB'):
                if thr == 0 and key == 'pB': continue
                for per_piece in (False, True):
                    if per_piece:
                        kept = []
                        for b in sorted(set(p['piece'] for p in srt)):
                            kept += manifold([p for p in srt if p['piece'] == b], thr, key)
                    else:
                        kept = manifold(srt, thr, key)
                    nm = '(a) %s thr%g %s%s' % (oname, thr, key if thr else '', ' per-piece' if per_piece else '')
                    out[nm] = [p['n'] for p in kept]
        # merge only, no cap
        for thr in (1.0, 2.0, 5.0):
            for key in ('pA', 'pB'):
                out['(d) %s merge%g %s nocap' % (oname, thr, key)] = [p['n'] for p in manifold(srt, thr, key, cap=99)]
    # speculative points: within R + 1 (Bullet's breaking threshold) at the tick
    sp = points_of(rec, R + BULLET_BREAK)
    out['spec: eq within R+1'] = [p['n'] for p in sp]
    out['spec: bvh_own manifold R+1 thr1 pA'] = [p['n'] for p in manifold(sorted(sp, key=ORDERS['bvh_own']), 1.0, 'pA')]
    return out


def stats(v):
    v = np.array(v, float)
    return (float(np.median(v)), float(np.percentile(v, 90)), float(v.max())) if len(v) else (np.nan,) * 3


rows = []
for rec in recs:
    rr = rules_for(rec)
    ent = dict(ep=rec['ep'], k=rec['k'], patch=rec['patch'], ntri=len(points_of(rec)))
    for nm, ns in rr.items():
        n = unitsum(ns)
        ent[nm] = (float(np.linalg.norm(impulse(rec['vc'], rec['om'], n)[0] - rec['vo1'])), ang(n, rec['nfit']), len(ns))
    rows.append(ent)
pickle.dump(rows, open('/tmp/subset31/rules.pkl', 'wb'))
print(len(rows))
