#!/usr/bin/python3
"""What the game does at each recorded floor bounce, on the tick clock (NOTES, issue 12, "What
the game does at a flat contact", push30).

Per floor bounce with FREE_ROWS free rows before and after it (row-step velocity within
FREE_UU_S of gravity + drag, no skipped row, over the flat floor), the incoming and outgoing
vertical arcs are fitted by least squares as tick states (z, vz): each recorded row is the blend
(1 - a) S_j + a S_{j+1} of the two 120 Hz ticks around it, the episode's clock origin estimated
from its straddled bounces as EstimateBallClockOrigin (src/models/ball.h) does. The incoming arc
is stepped forward, the outgoing one backward; the contact tick c is the first tick whose centre
is below the contact radius R, and per bounce:
  d     = R - z_c                       depth at the contact tick, uu;
  e     = vz_{c+1} / -vz_c              rebound over the tick's pre-gravity normal speed;
  push  = z_{c+1} - z_c - vz_{c+1} dt   the outgoing arc's offset against "contact + v dt", uu.
Prints them by incoming speed and the push-out's knee and slope (push = slope max(0, d - knee)).

    scripts/flat_bounces.py [--data DIR] [--radius 93.1504] [--drag -0.030533]
"""
import argparse
import glob
import math
import os
import sys

import numpy as np

GRAVITY = -650.0  # uu/s^2
TICK_S = 1.0 / 120.0
ROW_HZ = 60.96  # recorded rows per second (the time column's clock)
TICKS_PER_ROW = 120.0 / 61.0  # ticks of game time per recorded row
FREE_UU_S = 0.5  # a free row step: velocity change within this of gravity + drag
CONTACT_UU_S = 8.0  # a contact step: off by more than this
FREE_ROWS = 3  # free rows fitted on each side of a bounce
FLOOR_BOX_UU = (3000.0, 4000.0)  # |x|, |y| of the flat floor, away from walls and curves
FIT_TOL = 0.05  # largest arc-fit residual kept, uu (and uu/s / 120)


def load(path):
    """(x, v, clock rows per step) of a ball_trajectories CSV."""
    a = np.loadtxt(path, delimiter=",", ndmin=2)
    return a[:, 1:4], a[:, 4:7], np.rint(np.diff(a[:, 0]) * ROW_HZ).astype(int)


def jumps(x, v, crow, drag):
    """Velocity change of each row step less gravity and drag, uu/s."""
    dts = crow / ROW_HZ
    vp = v[:-1].copy()
    vp[:, 2] += GRAVITY * dts
    vp *= np.exp(drag * dts)[:, None]
    return v[1:] - vp


def clock_origin(jump, crow):
    """Row 0's place on the tick clock, in clock rows (EstimateBallClockOrigin); None if no
    bounce straddles a row."""
    cum = np.concatenate([[0], np.cumsum(crow)])
    sc = ss = 0.0
    count = 0
    for k in range(2, len(jump) - 1):
        whole = jump[k - 1] + jump[k]
        w2 = whole @ whole
        if w2 < 800.0 ** 2:
            continue
        if np.linalg.norm(jump[k - 2]) > 5.0 or np.linalg.norm(jump[k + 1]) > 5.0:
            continue
        f = jump[k - 1] @ whole / w2
        if not 0.03 < f < 0.97:
            continue
        phase = 2.0 * math.pi * (f - cum[k] * TICKS_PER_ROW)
        sc += math.cos(phase)
        ss += math.sin(phase)
        count += 1
    if count == 0:
        return None
    p0 = math.atan2(ss, sc) / (2.0 * math.pi)
    return (p0 - math.floor(p0)) / TICKS_PER_ROW


def free_step(z, vz, drag):
    """One free tick as StepBall takes it: drag on the velocity the tick starts with, then
    gravity's change (NOTES, issue 12, phase32)."""
    vz = vz * math.exp(drag * TICK_S) + GRAVITY * TICK_S
    return z + vz * TICK_S, vz


def free_back(z, vz, drag):
    return z - vz * TICK_S, (vz - GRAVITY * TICK_S) / math.exp(drag * TICK_S)


def state_at(z, vz, j_from, j_to, drag):
    """Free flight from tick j_from to tick j_to (either way)."""
    for _ in range(max(0, j_to - j_from)):
        z, vz = free_step(z, vz, drag)
    for _ in range(max(0, j_from - j_to)):
        z, vz = free_back(z, vz, drag)
    return z, vz


def fit_arc(rows, tau, z, vz, jref, drag):
    """Least-squares tick state (z, vz) at tick jref whose free ticks blend to the rows; and the
    largest residual."""
    m, y = [], []
    for r in rows:
        j = math.floor(tau[r])
        a = tau[r] - j
        cols = []
        for unit in ((0.0, 0.0), (1.0, 0.0), (0.0, 1.0)):
            s0 = np.array(state_at(unit[0], unit[1], jref, j, drag))
            s1 = np.array(state_at(unit[0], unit[1], jref, j + 1, drag))
            cols.append((1 - a) * s0 + a * s1)
        b = cols[0]
        A = np.column_stack([cols[1] - b, cols[2] - b])
        m += [A[0], A[1] / 120.0]
        y += [z[r] - b[0], (vz[r] - b[1]) / 120.0]
    m, y = np.array(m), np.array(y)
    sol, *_ = np.linalg.lstsq(m, y, rcond=None)
    return sol, float(np.abs(y - m @ sol).max())


def floor_bounces(x, v, crow, radius, drag):
    """Per clean floor bounce of one episode: dict d, e, push, vz_in (pre-gravity, < 0)."""
    jump = jumps(x, v, crow, drag)
    origin = clock_origin(jump, crow)
    if origin is None:
        return []
    tau = (origin + np.concatenate([[0], np.cumsum(crow)])) * TICKS_PER_ROW
    jn = np.linalg.norm(jump, axis=1)
    n = len(x)
    out = []
    k = 0
    while k < n - 1:
        if not (jn[k] > CONTACT_UU_S and x[k, 2] < 200.0 and jump[k, 2] > 0.0):
            k += 1
            continue
        k0 = k1 = k
        while k1 + 1 < n - 1 and jn[k1 + 1] > FREE_UU_S:
            k1 += 1
        k = k1 + 1
        if k1 - k0 > 2 or k0 - FREE_ROWS < 0 or k1 + 1 + FREE_ROWS >= n:
            continue
        span = range(k0 - FREE_ROWS, k1 + 1 + FREE_ROWS)
        free = list(range(k0 - FREE_ROWS, k0)) + list(range(k1 + 1, k1 + 1 + FREE_ROWS))
        if any(jn[i] >= FREE_UU_S for i in free) or any(crow[i] != 1 for i in span):
            continue
        if any(abs(x[r, 0]) >= FLOOR_BOX_UU[0] or abs(x[r, 1]) >= FLOOR_BOX_UU[1]
               for r in (k0, k1 + 1)):
            continue
        jin, jout = math.floor(tau[k0]), math.floor(tau[k1 + 1])
        s_in, r_in = fit_arc(range(k0 - FREE_ROWS + 1, k0 + 1), tau, x[:, 2], v[:, 2], jin, drag)
        s_out, r_out = fit_arc(range(k1 + 1, k1 + 1 + FREE_ROWS), tau, x[:, 2], v[:, 2], jout,
                               drag)
        if max(r_in, r_out) > FIT_TOL:
            continue
        z, vz = s_in
        c = jin
        while c < jout and z >= radius:
            z, vz = free_step(z, vz, drag)
            c += 1
        if c >= jout:
            continue
        z_out, vz_out = state_at(s_out[0], s_out[1], jout, c + 1, drag)
        out.append(dict(d=radius - z, vz_in=vz, e=vz_out / -vz,
                        push=z_out - z - vz_out * TICK_S))
    return out


def knee_fit(d, push, outlier_uu=0.5):
    """(knee, slope, |residual| max, outliers) of push = slope max(0, d - knee), knee on a
    0.005 uu grid by least squares, refitted once without the bounces off the first fit by more
    than outlier_uu (a handful of odd episodes, e.g. 332, would otherwise pull the line)."""
    def fit(mask):
        best = None
        for knee in np.arange(0.0, 4.0, 0.005):
            h = np.maximum(0.0, d[mask] - knee)
            if h @ h == 0.0:
                continue
            slope = (h @ push[mask]) / (h @ h)
            sse = float(((push[mask] - slope * h) ** 2).sum())
            if best is None or sse < best[0]:
                best = (sse, float(knee), float(slope))
        return best[1], best[2]
    keep = np.ones(len(d), bool)
    knee, slope = fit(keep)
    keep = np.abs(push - slope * np.maximum(0.0, d - knee)) <= outlier_uu
    knee, slope = fit(keep)
    resid = np.abs(push - slope * np.maximum(0.0, d - knee))[keep]
    return knee, slope, float(resid.max()), int((~keep).sum())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("RLFIT_DATA", ""),
                    help="datasets root (default $RLFIT_DATA)")
    ap.add_argument("--radius", type=float, default=93.1504, help="contact radius, uu")
    ap.add_argument("--drag", type=float, default=-0.030533, help="drag, 1/s")
    a = ap.parse_args(argv)
    files = sorted(glob.glob(os.path.join(a.data, "ball_trajectories", "episode_*.csv")))
    if not files:
        print(f"flat_bounces: no ball_trajectories episodes under '{a.data}'", file=sys.stderr)
        return 2
    rows = []
    for f in files:
        x, v, crow = load(f)
        rows += floor_bounces(x, v, crow, a.radius, a.drag)
    if not rows:
        print("flat_bounces: no clean floor bounce found", file=sys.stderr)
        return 1
    d = np.array([r["d"] for r in rows])
    push = np.array([r["push"] for r in rows])
    e = np.array([r["e"] for r in rows])
    speed = -np.array([r["vz_in"] for r in rows])
    print(f"{len(rows)} floor bounces in {len(files)} episodes")
    print("|vz_in| uu/s     n   d median   push median   e median (p10-p90)")
    for lo, hi in ((0, 400), (400, 800), (800, 1500), (1500, math.inf)):
        m = (speed >= lo) & (speed < hi)
        if m.any():
            print(f"{lo:>5.0f}-{hi:<7.0f} {m.sum():>5} {np.median(d[m]):>10.3f} "
                  f"{np.median(push[m]):>13.3f}   {np.median(e[m]):.4f} "
                  f"({np.percentile(e[m], 10):.4f}-{np.percentile(e[m], 90):.4f})")
    knee, slope, worst, outliers = knee_fit(d, push)
    print(f"push = {slope:.3f} max(0, d - {knee:.3f}); largest |residual| {worst:.3f} uu "
          f"({outliers} bounces off by more than 0.5 uu left out)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
