#!/usr/bin/python3
"""What the ball does in each episode, and which of those classes hold the held-out errors
(NOTES, issue 12, "What holds the median and the tail").

Every recorded ball episode is classed by what the recorded ball does from row 0 to a horizon
(5 s, and the last row):
  free        no contact at all (every row step is gravity + drag to within CONTACT_UU_S);
  floor       bounces on the floor only, never rolling;
  rolling     rolls on the floor (ROLL_ROWS rows or more with the centre within
              radius + ROLL_GAP_UU of the floor and |vz| < ROLL_VN_UU_S), no other surface;
  wall        touches a flat side / back wall or the ceiling, no curve, ramp or goal;
  curve       touches a curve, ramp, ceiling edge or the goal (pitch.dat's patches, as
              scripts/mesh_patches.py labels them).
A contact is a row step whose velocity change differs from gravity + drag by more than
CONTACT_UU_S; consecutive contact steps are one contact, placed on the patch of the triangle
closest to the ball at the step's ends. Given `rlfit crossval ball --out` / `rlsim replay ball
--out` folders (their replay_summary.json), prints count, median and p90 of each folder's
per-episode open-loop |dx| per class, and the classes of the episodes near the median and in
the tail.

    PYTHONPATH=build/python scripts/ball_classes.py [--data DIR] [--episodes-csv OUT] \
        NAME=DIR [NAME=DIR ...]
"""
import argparse
import csv
import glob
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mesh_patches  # noqa: E402 (a sibling script: the patch labels and the closest point)

GRAVITY_Z = -650.0  # uu/s^2 (src/common/constants.h)
DRAG_1_S = -0.0304  # 1/s, the committed fit's drag to 3 digits (results/ball/coeffs.json)
RADIUS_UU = 93.15  # ball radius, uu (the game's; the fit's contact_radius is 93.16-93.19)
CONTACT_UU_S = 8.0  # |dv - free flight's| above this over one row is a contact (free flight's
#                     residual is < 0.5 uu/s; a row straddling a bounce carries a fraction of it)
NEAR_UU = 40.0  # a contact's surface is the closest triangle within radius + this
ROLL_GAP_UU = 1.5  # rolling: centre within radius + this of the floor ...
ROLL_VN_UU_S = 5.0  # ... with |vz| below this ...
ROLL_ROWS = 10  # ... on at least this many rows (0.16 s)
FLAT_WALLS = ("side wall", "back wall", "ceiling")
CLASSES = ("free", "floor", "rolling", "wall", "curve")


def read_episode(path):
    """(t_s, x, v, w) of a ball_trajectories CSV: (N,), (N, 3) x3. ValueError naming the file
    and row on a bad line."""
    rows = []
    with open(path) as f:
        for i, line in enumerate(f, start=1):
            fields = line.split(",")
            try:
                values = [float(v) for v in fields]
            except ValueError:
                raise ValueError(f"{path}:{i}: not a number") from None
            if len(values) != 13:
                raise ValueError(f"{path}:{i}: {len(values)} columns, expected 13")
            rows.append(values)
    a = np.array(rows)
    return a[:, 0], a[:, 1:4], a[:, 4:7], a[:, 10:13]


def free_residual(v, dt_s):
    """|v[k+1] - free flight from v[k]| per row step, uu/s (the model's order: gravity, then
    drag). NaN where dt_s <= 0 (duplicated rows)."""
    g = np.array([0.0, 0.0, GRAVITY_Z])
    pred = (v[:-1] + g * dt_s[:, None]) * np.exp(DRAG_1_S * dt_s)[:, None]
    r = np.linalg.norm(v[1:] - pred, axis=1)
    return np.where(dt_s > 0, r, np.nan)


def near_walls(x):
    """Rows that may be within reach of a triangle other than the floor (cheap prefilter:
    pitch.dat's walls at |x| 4096, |y| 5120, ceiling 2044, curves and ramps within ~300 uu; the
    corner ramps reach inside |x| 3500, |y| 4500 along the diagonal, to |x| + |y| 7521.9 at
    z <= 75 uu, so rows beyond |x| + |y| 7100 are looked up too: without that a corner-ramp
    contact there was labelled "none", NOTES tail31)."""
    ax, ay = np.abs(x[:, 0]), np.abs(x[:, 1])
    return (ax > 3500) | (ay > 4500) | (x[:, 2] > 1700) | (ax + ay > 7100)


def contacts(mesh, x, v, dt_s):
    """[(first step, last step, patch)] of one episode's contacts, and the per-row rolling
    flags. A step k joins rows k and k+1."""
    r = free_residual(v, dt_s)
    hit = np.nan_to_num(r, nan=0.0) > CONTACT_UU_S
    events, k, n = [], 0, len(hit)
    wallish = near_walls(x)
    while k < n:
        if not hit[k]:
            k += 1
            continue
        j = k
        while j + 1 < n and hit[j + 1]:
            j += 1
        patch, best = None, np.inf
        for row in range(k, j + 2):
            if wallish[row]:
                found = mesh.nearest(x[row])
                if found is not None and found[0] < best:
                    best, patch = found[0], mesh.labels[found[2]]
            gap_floor = x[row, 2]  # the floor is z = 0
            if gap_floor < best:
                best, patch = gap_floor, "floor"
        if best > RADIUS_UU + NEAR_UU:
            patch = "none"
        events.append((k, j, patch))
        k = j + 1
    rolling = (x[:, 2] < RADIUS_UU + ROLL_GAP_UU) & (np.abs(v[:, 2]) < ROLL_VN_UU_S) & ~wallish
    return events, rolling


def classify(events, rolling, last_row):
    """(class, number of contacts, rolling rows) of rows 0..last_row."""
    ev = [e for e in events if e[0] < last_row]
    patches = {p for _, _, p in ev}
    n_roll = int(rolling[: last_row + 1].sum())
    if patches - {"floor", "side wall", "back wall", "ceiling", "none"}:
        cls = "curve"
    elif patches & set(FLAT_WALLS):
        cls = "wall"
    elif n_roll >= ROLL_ROWS:
        cls = "rolling"
    elif ev:
        cls = "floor"
    else:
        cls = "free"
    return cls, len(ev), n_roll


def per_episode_dx(folder):
    """{episode name: {horizon: |dx|}} of a replay_summary.json, horizon 5.0 or 'last'."""
    with open(os.path.join(folder, "replay_summary.json")) as f:
        d = json.load(f)
    out = {}
    for e in d["errors"]:
        if e["quantity"] != "dx" or e["mode"] != "open_loop" or e["episode"] is None:
            continue
        h = "last" if e["horizon_s"] is None else e["horizon_s"]
        out.setdefault(e["episode"], {})[h] = e["median"]
    return out


def q(values, p):
    return float(np.percentile(values, p)) if len(values) else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="NAME=DIR of replay_summary.json folders")
    ap.add_argument("--data", default="", help="datasets root (default: rlfit.data_root())")
    ap.add_argument("--episodes-csv", help="write one line per episode here")
    args = ap.parse_args(argv)
    runs = []
    for spec in args.runs:
        name, _, folder = spec.partition("=")
        try:
            runs.append((name, per_episode_dx(folder)))
        except (OSError, ValueError, KeyError) as err:
            print(f"ball_classes: {folder}: {err}", file=sys.stderr)
            return 2
    names = sorted(set.intersection(*(set(r) for _, r in runs)))
    root = args.data or mesh_patches.rlfit.data_root()
    try:
        mesh = mesh_patches.Mesh(mesh_patches.read_triangles(
            os.path.join(root, "meshes", "pitch.dat")))
    except (OSError, ValueError) as err:
        print(f"ball_classes: {err}", file=sys.stderr)
        return 2
    info = {}
    for name in names:
        path = os.path.join(root, "ball_trajectories", name)
        try:
            t, x, v, w = read_episode(path)
        except (OSError, ValueError) as err:
            print(f"ball_classes: {err}", file=sys.stderr)
            return 2
        dt_s = np.diff(t)
        events, rolling = contacts(mesh, x, v, dt_s)
        row5 = int(np.searchsorted(t, 5.0 - 1e-9))
        c5 = classify(events, rolling, row5)
        cl = classify(events, rolling, len(t) - 1)
        first = events[0][0] if events else None
        info[name] = dict(c5=c5, cl=cl, speed=float(np.linalg.norm(v[0])),
                          spin=float(np.linalg.norm(w[0])),
                          first_contact_s=None if first is None else float(t[first]),
                          first_patch=None if first is None else events[0][2],
                          patches5=sorted({p for k, _, p in events if k < row5}))
    for horizon, key in ((5.0, "c5"), ("last", "cl")):
        print(f"\n== class by rows 0..{'5 s' if horizon == 5.0 else 'last'}; |dx| uu at "
              f"{'5 s' if horizon == 5.0 else 'the last row'}: median (p90) ==")
        head = "| class | n | contacts (median) | " + " | ".join(n for n, _ in runs) + " |"
        print(head)
        print("|" + "---|" * (3 + len(runs)))
        for cls in CLASSES:
            eps = [e for e in names if info[e][key][0] == cls]
            ncon = [info[e][key][1] for e in eps]
            cells = []
            for _, r in runs:
                vals = [r[e][horizon] for e in eps]
                cells.append(f"{q(vals, 50):.2f} ({q(vals, 90):.1f})" if eps else "-")
            n_contacts = f"{q(ncon, 50):.0f}" if eps else "-"
            print(f"| {cls} | {len(eps)} | {n_contacts} | " + " | ".join(cells) + " |")
        for name, r in runs:
            vals = np.array([r[e][horizon] for e in names])
            order = np.argsort(vals)
            n = len(names)
            mid = [names[i] for i in order[int(0.4 * n): int(0.6 * n)]]
            tail = [names[i] for i in order[int(0.9 * n):]]
            count = lambda eps: ", ".join(  # noqa: E731
                f"{c} {sum(1 for e in eps if info[e][key][0] == c)}" for c in CLASSES)
            print(f"{name}: 40-60th percentile ({len(mid)}): {count(mid)}; "
                  f"top 10% ({len(tail)}): {count(tail)}")
    if args.episodes_csv:
        with open(args.episodes_csv + ".tmp", "w", newline="") as f:
            out = csv.writer(f)
            out.writerow(["episode", "class_5s", "contacts_5s", "rolling_rows_5s", "class_last",
                          "contacts_last", "rolling_rows_last", "speed0", "spin0", "first_contact_s", "first_patch",
                          "patches_5s"]
                         + [f"{n}_{h}" for n, _ in runs for h in ("5s", "last")])
            for e in names:
                i = info[e]
                out.writerow([e, *i["c5"], *i["cl"], f"{i['speed']:.1f}", f"{i['spin']:.3f}",
                              i["first_contact_s"], i["first_patch"], ";".join(i["patches5"])]
                             + [f"{r[e][h]:.4f}" for _, r in runs for h in (5.0, "last")])
        os.replace(args.episodes_csv + ".tmp", args.episodes_csv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
