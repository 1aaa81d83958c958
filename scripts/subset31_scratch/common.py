# Scratch (rampt30): fast isolated side/corner ramp bounces on the tick clock, bounce by bounce.
# Incoming and outgoing free arcs fitted as 3D tick states (flat_bounces.py's clock and blend),
# contact tick inferred, facets and depths there, dv in the deepest facet's frame, effective
# normal fitted under the model's impulse law, and candidate rules compared.
import sys, os, json, glob, math, numpy as np
sys.path.insert(0, '/work/wt/subset31/scripts')
import rlfit, mesh_patches, ball_classes as bc, flat_bounces as fb
from scipy.optimize import least_squares

root = '/work/shared/datasets/lobot'
tris = mesh_patches.read_triangles(os.path.join(root, 'meshes', 'pitch.dat'))
mesh = mesh_patches.Mesh(tris)
labels = np.array(mesh.labels)
A, B, C = tris[:, 0], tris[:, 1], tris[:, 2]
fn = np.cross(B - A, C - A); fn /= np.linalg.norm(fn, axis=1)[:, None]
lo, hi = tris.min(axis=1), tris.max(axis=1)
co = json.load(open('/tmp/subset31/coeffs_rampt30.json'))['coefficients']
R = co['contact_radius']; DRAG = co['drag']; CR = co['restitution']; MU = co['mu']; Y = co['Y']
SF = co['spin_factor']; REC = co['recovery']; RB = 91.25; SLOP = 1.9
G = np.array([0, 0, -650.0]); DT = 1 / 120.0; EDR = math.exp(DRAG * DT)
PATCHES = None
VMIN = 300.0; TOL = 0.05


def cp(p, a, b, c):
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = ab @ ap, ac @ ap
    if d1 <= 0 and d2 <= 0: return a
    bp = p - b; d3, d4 = ab @ bp, ac @ bp
    if d3 >= 0 and d4 <= d3: return b
    vc = d1 * d4 - d3 * d2
    if vc <= 0 and d1 >= 0 and d3 <= 0: return a + d1 / (d1 - d3) * ab
    cpp = p - c; d5, d6 = ab @ cpp, ac @ cpp
    if d6 >= 0 and d5 <= d6: return c
    vb = d5 * d2 - d1 * d6
    if vb <= 0 and d2 >= 0 and d6 <= 0: return a + d2 / (d2 - d6) * ac
    va = d3 * d6 - d5 * d4
    if va <= 0 and (d4 - d3) >= 0 and (d5 - d6) >= 0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6)); return b + w * (c - b)
    den = 1 / (va + vb + vc); return a + ab * vb * den + ac * vc * den


def touching(x0, r=R):
    """[(depth, tri, face normal toward x0, closest-feature unit)] deepest first."""
    idx = np.where(np.all(lo - r <= x0, axis=1) & np.all(hi + r >= x0, axis=1))[0]
    out = []
    for t in idx:
        q = cp(x0, A[t], B[t], C[t]); d = np.linalg.norm(x0 - q)
        if d < r:
            n = fn[t] if fn[t] @ (x0 - A[t]) > 0 else -fn[t]
            out.append((r - d, int(t), n, (x0 - q) / d))
    out.sort(key=lambda z: -z[0]); return out


def unit(a): return a / np.linalg.norm(a)


def free(x, v):
    v = (v + G * DT) * EDR; return x + v * DT, v


def back(x, v):
    return x - v * DT, v / EDR - G * DT


def state_at(x, v, jf, jt):
    for _ in range(max(0, jt - jf)): x, v = free(x, v)
    for _ in range(max(0, jf - jt)): x, v = back(x, v)
    return x, v


def fit_arc(rows, tau, X, V, jref):
    """3D tick state (x, v) at tick jref whose free ticks blend to the rows; largest residual."""
    m, y = [], []
    for r in rows:
        j = math.floor(tau[r]); a = tau[r] - j
        def blend(x, v):
            s0 = state_at(x, v, jref, j); s1 = state_at(x, v, jref, j + 1)
            return np.concatenate([(1 - a) * s0[0] + a * s1[0], (1 - a) * s0[1] + a * s1[1]])
        b = blend(np.zeros(3), np.zeros(3))
        cols = []
        for i in range(6):
            e = np.zeros(6); e[i] = 1
            cols.append(blend(e[:3], e[3:]) - b)
        M = np.column_stack(cols)
        sc = np.array([1, 1, 1, 1 / 120, 1 / 120, 1 / 120])
        m += list(M * sc[:, None]); y += list((np.concatenate([X[r], V[r]]) - b) * sc)
    m, y = np.array(m), np.array(y)
    sol, *_ = np.linalg.lstsq(m, y, rcond=None)
    return sol[:3], sol[3:], float(np.abs(y - m @ sol).max())


def impulse(v, omega, n):
    """The model's contact step at a tick with velocity v (pre-gravity) and normal n: v2."""
    v1 = (v + G * DT) * EDR
    vn = v1 @ n; vn0 = v @ n
    if vn >= 0: return v1, omega
    tgt = -CR * vn0 if vn0 < 0 else 0.0
    if tgt <= vn: return v1, omega
    dvn = tgt - vn
    slip = v1 - vn * n + RB * np.cross(n, omega)
    dvp = np.zeros(3); s = np.linalg.norm(slip)
    if s > 1e-6:
        lim = Y * dvn / (1 + CR); sc = lim / s if lim < s else 1.0
        dvp = -sc * MU * slip
    return v1 + dvn * n + dvp, omega + SF / RB * np.cross(dvp, n)


def basis(n):
    a = np.array([1.0, 0, 0]) if abs(n[0]) < 0.9 else np.array([0, 1.0, 0])
    e1 = unit(np.cross(n, a)); return e1, np.cross(n, e1)


def fit_normal(v, omega, target, nref):
    e1, e2 = basis(nref)
    nof = lambda p: unit(nref + p[0] * e1 + p[1] * e2)
    r = least_squares(lambda p: impulse(v, omega, nof(p))[0] - target, [0.0, 0.0], x_scale=0.02)
    return nof(r.x), float(np.linalg.norm(r.fun))


def side_circle(x):
    cx = math.copysign(3839.9, x[0]); d = np.array([cx - x[0], 0.0, 256.2 - x[2]])
    return unit(d)


ang = lambda a, b: float(np.degrees(np.arccos(np.clip(a @ b, -1, 1))))


def near(x0, r):
    """[(distance, tri, face normal toward x0, closest-feature unit, closest point)] within r."""
    idx = np.where(np.all(lo - r <= x0, axis=1) & np.all(hi + r >= x0, axis=1))[0]
    out = []
    for t in idx:
        q = cp(x0, A[t], B[t], C[t]); d = np.linalg.norm(x0 - q)
        if d < r:
            n = fn[t] if fn[t] @ (x0 - A[t]) > 0 else -fn[t]
            out.append((float(d), int(t), n, (x0 - q) / d, q))
    out.sort(key=lambda z: z[0]); return out
