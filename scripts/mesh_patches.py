#!/usr/bin/python3
"""Where meshes/pitch.dat is against the recorded ball, patch by patch (NOTES, issue 12, "Where
the mesh is, patch by patch, and the goal").

Labels every triangle of pitch.dat with its patch (floor, walls, ceiling and its edges, the
ramps and curves, the goal's floor, nets, roof, curves and frame: `patch_of`), then finds in
every ball_trajectories episode the rows where a slow contact locates the surface and prints,
per patch, count, median, p10, p90 and worst of (distance - radius): the recorded centre's
distance to the closest point of the mesh, less the model's contact radius. Kinds of row:
  rolling   |v.n| < 3 uu/s on rows k-1, k, k+1, all three within radius + 3 uu, and pressed
            (contact force along n from the recorded velocity change, gravity removed,
            > 300 uu/s^2: a ball sliding along a wall with no load is not touching it);
  turn<40   a local minimum of the distance where v.n goes from < -2 uu/s (row k-1, incoming
            speed under 40 uu/s: the row is at most 0.66 uu past the turning point) to > 0
            (row k+1) with a change beyond gravity's of more than 3 uu/s;
  turn<150  the same with incoming speed 40-150 uu/s.
n is the unit vector from the closest mesh point to the centre at row k. A patch whose
medians sit more than a fraction of a uu from the floor's and walls' (-0.04 to -0.09 with the
committed radius) is where the game's surface is not where pitch.dat has it (the flat
ceiling: -4.1 uu).

    PYTHONPATH=build/python scripts/mesh_patches.py [--data DIR] [--radius 93.177] [--episodes N]
"""
import argparse
import glob
import os
import sys

import numpy as np

import rlfit

GRAVITY_Z = -650.0  # uu/s^2 (src/common/constants.h)


def committed_radius():
    """The ball's contact_radius in the committed fit (results/ball/coeffs.json), uu."""
    c = rlfit.load_coefficients("ball")
    return float(c["values"][list(c["names"]).index("contact_radius")])

REACH_UU = 110.0  # triangles whose bounding box lies within this of the centre are searched
ROLL_VN_UU_S = 3.0  # |v.n| below this on three rows: rolling or sliding along the surface
ROLL_GAP_UU = 3.0  # ... with the centre within radius + this on all three rows
ROLL_LOAD_UU_S2 = 300.0  # ... and a contact force (per mass) above this along n
TURN_CHANGE_UU_S = 3.0  # a turn changes v.n by more than gravity's share plus this
TURN_MIN_UU_S = 2.0  # incoming |v.n| of a turn exceeds this (below it the ball rolls)
TURN_SLOW_UU_S = 40.0  # incoming |v.n| of a "turn<40"
TURN_MEDIUM_UU_S = 150.0  # incoming |v.n| of a "turn<150"
KINDS = ("rolling", "turn<40", "turn<150")


def read_triangles(path):
    """pitch.dat as an (N, 3, 3) array, uu. ValueError naming file and row on a bad line."""
    rows = []
    with open(path) as f:
        for i, line in enumerate(f, start=1):
            fields = line.split()
            try:
                values = [float(v) for v in fields]
            except ValueError:
                values = []
            if len(values) != 9 or not np.all(np.isfinite(values)):
                raise ValueError(f"{path}: row {i}: expected 9 finite numbers, got {line.strip()!r}")
            rows.append(values)
    return np.array(rows, dtype=float).reshape(-1, 3, 3)


def unit_normals(tris):
    """Unit normals (N, 3) by the vertices' order (pitch.dat's face the arena's inside)."""
    n = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    return n / np.linalg.norm(n, axis=1)[:, None]


def patch_of(c, n):
    """Patch of a triangle with centroid c and inward unit normal n (uu; thresholds from
    pitch.dat's layout: field |x| <= 4096, |y| <= 5120, ceiling 2044, goals to |y| 6000, |x| 896,
    z 640)."""
    ax, ay, nz = abs(n[0]), abs(n[1]), n[2]
    if abs(c[1]) > 5121 and abs(c[0]) < 905 and c[2] < 660:
        if abs(c[1]) < 5135:
            return "goal frame"
        if nz > 0.99:
            return "goal floor"
        if ax > 0.9:
            return "goal side net"
        if nz < -0.99 or (nz < -0.9 and abs(c[1]) < 5860):
            return "goal roof"
        if ay > 0.9 and abs(nz) < 0.4:
            return "goal back net"
        return "goal floor-to-back curve" if nz > 0 else "goal roof-to-back curve"
    if nz > 0.9999 and c[2] < 5:
        return "floor"
    if nz < -0.9999 and c[2] > 2000:
        return "ceiling"
    if ax > 0.9999:
        return "side wall"
    if ay > 0.9999:
        return "back wall"
    if nz < -0.01:
        return "ceiling edge"
    if abs(nz) <= 0.01:
        return "corner curve"
    if ax > 0.02 and ay > 0.02:
        return "corner ramp"
    if abs(c[1]) > 4900 and abs(c[0]) < 1300:
        return "goal mouth ramp"
    return "side ramp" if ax > ay else "back ramp"


def patch_labels(tris):
    normals = unit_normals(tris)
    return [patch_of(c, n) for c, n in zip(tris.mean(axis=1), normals)]


def closest_point(p, tris):
    """(distance, point, index) of the closest point of the triangles (M, 3, 3) to p."""
    a, b, c = tris[:, 0], tris[:, 1], tris[:, 2]
    ab, ac = b - a, c - a
    normal = np.cross(ab, ac)
    nn = (normal * normal).sum(axis=1)
    # Projection onto each plane and its barycentric coordinates.
    t = ((p - a) * normal).sum(axis=1) / nn
    q = p - normal * t[:, None]
    u = (np.cross(c - b, q - b) * normal).sum(axis=1) / nn
    v = (np.cross(a - c, q - c) * normal).sum(axis=1) / nn
    w = 1.0 - u - v
    best = q.copy()
    dist = np.where((u >= 0) & (v >= 0) & (w >= 0), np.linalg.norm(p - q, axis=1), np.inf)
    for s, e in ((a, b), (b, c), (c, a)):
        se = e - s
        f = np.clip(((p - s) * se).sum(axis=1) / (se * se).sum(axis=1), 0.0, 1.0)
        on_edge = s + se * f[:, None]
        d = np.linalg.norm(p - on_edge, axis=1)
        closer = d < dist
        best[closer], dist[closer] = on_edge[closer], d[closer]
    i = int(np.argmin(dist))
    return float(dist[i]), best[i], i


class Mesh:
    """Triangles with their bounding boxes and patch labels."""

    def __init__(self, tris):
        self.tris = tris
        self.lo, self.hi = tris.min(axis=1), tris.max(axis=1)
        self.labels = patch_labels(tris)

    def nearest(self, p):
        """(distance, point, triangle index) within REACH_UU of p, or None."""
        gap = np.maximum(0.0, np.maximum(self.lo - p, p - self.hi))
        idx = np.flatnonzero((gap * gap).sum(axis=1) < REACH_UU * REACH_UU)
        if idx.size == 0:
            return None
        d, q, i = closest_point(p, self.tris[idx])
        return d, q, int(idx[i])


def slow_contacts(mesh, x, v, step_dt_s, radius, near=None):
    """[(patch, kind, distance - radius)] of one episode: x, v (N, 3), step_dt_s (N - 1,).
    near (N,) bool, if given, limits the search to those rows (a cheap prefilter)."""
    n_rows = len(x)
    rows = {}
    for k in range(1, n_rows - 1):
        if near is not None and not near[k]:
            continue
        hit = mesh.nearest(x[k])
        if hit is None or hit[0] > radius + 6.0:
            continue
        d, q, i = hit
        n = (x[k] - q) / d
        dt_two = step_dt_s[k - 1] + step_dt_s[k]
        vm, v0, vp = v[k - 1] @ n, v[k] @ n, v[k + 1] @ n
        change = (vp - vm) - GRAVITY_Z * n[2] * dt_two  # v.n change less gravity's, uu/s
        rows[k] = (d, i, vm, v0, vp, change, dt_two)
    out = []
    for k, (d, i, vm, v0, vp, change, dt_two) in rows.items():
        prev, nxt = rows.get(k - 1), rows.get(k + 1)
        patch, gap = mesh.labels[i], d - radius
        if (prev is not None and nxt is not None
                and max(abs(v0), abs(prev[3]), abs(nxt[3])) < ROLL_VN_UU_S
                and max(d, prev[0], nxt[0]) < radius + ROLL_GAP_UU
                and change / dt_two > ROLL_LOAD_UU_S2):
            out.append((patch, "rolling", gap))
        # A neighbour missing from `rows` is farther than radius + 6 uu from the mesh.
        closest = (prev is None or prev[0] >= d) and (nxt is None or nxt[0] >= d)
        if (closest and vm < -TURN_MIN_UU_S and vp > 0 and change > TURN_CHANGE_UU_S
                and gap < ROLL_GAP_UU and -vm < TURN_MEDIUM_UU_S):
            out.append((patch, "turn<40" if -vm < TURN_SLOW_UU_S else "turn<150", gap))
    return out


def table(contacts):
    """Markdown table: patch, kind, n, median, p10, p90, worst (farthest from the median)."""
    lines = ["| patch | kind | n | median | p10 | p90 | worst |", "|---|---|---|---|---|---|---|"]
    groups = {}
    for patch, kind, gap in contacts:
        groups.setdefault((patch, kind), []).append(gap)
    for (patch, kind) in sorted(groups, key=lambda pk: (pk[0], KINDS.index(pk[1]))):
        a = np.array(groups[(patch, kind)])
        worst = a[np.argmax(np.abs(a - np.median(a)))]
        lines.append(f"| {patch} | {kind} | {len(a)} | {np.median(a):.3f} | "
                     f"{np.percentile(a, 10):.3f} | {np.percentile(a, 90):.3f} | {worst:.3f} |")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="", help="datasets root (default: rlfit.data_root())")
    ap.add_argument("--radius", type=float, default=None,
                    help="contact radius, uu (default: the committed fit's contact_radius)")
    ap.add_argument("--episodes", type=int, default=0, help="first N episodes only (0: all)")
    args = ap.parse_args(argv)
    root = args.data or rlfit.data_root()
    if not root:
        print("mesh_patches.py: no datasets root (pass --data or set RLFIT_DATA)", file=sys.stderr)
        return 2
    try:
        radius = args.radius if args.radius is not None else committed_radius()
        mesh = Mesh(read_triangles(os.path.join(root, "meshes", "pitch.dat")))
    except (OSError, ValueError) as e:  # rlfit.InputError is a ValueError
        print(f"mesh_patches.py: {e}", file=sys.stderr)
        return 2
    arena = rlfit.Arena(root)
    paths = sorted(glob.glob(os.path.join(root, "ball_trajectories", "episode_*.csv")))
    if args.episodes > 0:
        paths = paths[:args.episodes]
    contacts = []
    for path in paths:
        ep = rlfit.read_recording(path)[0]
        near = arena.collide_batch(np.ascontiguousarray(ep["x"]), radius + 8.0)["hit"]
        contacts += slow_contacts(mesh, ep["x"], ep["v"], ep["step_dt_s"], radius, near)
    print(f"{len(paths)} episodes, radius {radius} uu: distance - radius, uu")
    print(table(contacts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
