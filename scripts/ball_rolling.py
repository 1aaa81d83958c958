#!/usr/bin/python3
"""How a rolling ball slows down, recorded against the ball model (NOTES "Ball tail").

Reads the trajectories of `rlsim replay ball --out DIR` (model and recorded columns side by
side) and prints:
  1. rolling rows (z within 0.3 uu of 93.15, |vz| < 1 uu/s, five rows in a row): speed decay
     rate (1/|v| d|v|/dt) per speed bin, recorded and model, and the recorded slip
     |v - R omega x n| with R = 91.25 uu (rolling without slip gives 0);
  2. free flight of the recordings (no velocity jump, 300 < z < 1700, away from the walls):
     decay of the horizontal speed (the drag) and of |omega| (angular damping);
  3. episodes ending in a roll (recorded and model): |dx| when the final roll starts, |dv|
     then, |dx| at the last row, and |dx_last - (dx0 + dv0 T)|: what the rolling dynamics
     get wrong beyond carrying the entry errors over the roll's T seconds;
  4. the along-track error at the last row (model minus recorded, along the recorded
     horizontal velocity): > 0 the model overshoots, < 0 it falls short.
Rates are per second of game time: one row is 1/61 s (120/61 ticks; src/models/ball.h, the tick clock).
Figures are over every episode in DIR (training and held-out alike: nothing here is fitted).

    build/rlsim replay ball --out /tmp/ball && scripts/ball_rolling.py /tmp/ball
"""
import argparse
import csv
import glob
import os
import sys

import numpy as np

ROW_S = 1.0 / 61.0  # game time of one recorded row, s
REST_Z_UU = 93.15  # rest height of the ball on the floor, uu
ROLL_RADIUS_UU = 91.25  # lever arm of rolling contact (v = R n x omega), uu
GRAVITY_ROW = 650.0 * ROW_S  # change of vz per row in free flight, uu/s
SPEED_BINS = [50, 100, 200, 400, 700]  # uu/s
COLUMNS = ["x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz"]


def read_episode(path):
    """(model, recorded) arrays of shape (rows, 9) from one replay CSV; exits on bad input."""
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            fail(path, 1, 1, "empty file")
        names = COLUMNS + ["rec_" + c for c in COLUMNS]
        missing = [n for n in names if n not in header]
        if missing:
            fail(path, 1, 1, "missing column " + missing[0] + " (not an `rlsim replay ball` output?)")
        index = [header.index(n) for n in names]
        rows = []
        for line_no, row in enumerate(reader, start=2):
            try:
                values = [float(row[i]) for i in index]
            except (ValueError, IndexError):
                fail(path, line_no, 0, "expected numbers in every model and recorded column")
            if not all(np.isfinite(values)):
                fail(path, line_no, 0, "non-finite value")
            rows.append(values)
    a = np.array(rows).reshape(-1, 2 * len(COLUMNS))
    return a[:, : len(COLUMNS)], a[:, len(COLUMNS) :]


def fail(path, row, column, message):
    print(f"{path}:{row}:{column}: {message}", file=sys.stderr)
    sys.exit(2)


def rolling(s):
    """Rows rolling on the floor, with two rolling rows on each side."""
    on = (np.abs(s[:, 2] - REST_Z_UU) < 0.3) & (np.abs(s[:, 5]) < 1.0)
    out = on.copy()
    for shift in (1, 2):
        out[shift:] &= on[:-shift]
        out[:-shift] &= on[shift:]
    out[:2] = False
    out[-2:] = False
    return out


def decay_rows(s):
    """(speed, decay rate 1/s, slip uu/s) for each rolling row of s."""
    speed = np.hypot(s[:, 3], s[:, 4])
    k = np.where(rolling(s))[0]
    rate = (speed[k + 1] - speed[k - 1]) / (2.0 * ROW_S) / np.maximum(speed[k], 1e-9)
    slip = np.hypot(s[k, 3] - ROLL_RADIUS_UU * s[k, 7], s[k, 4] + ROLL_RADIUS_UU * s[k, 6])
    return np.stack([speed[k], rate, slip], 1)


def free_flight_spans(r):
    """(horizontal log-decay 1/s, relative |omega| change 1/s) over free spans >= 0.5 s."""
    free = (r[:, 2] > 300) & (r[:, 2] < 1700) & (np.abs(r[:, 0]) < 3600) & (np.abs(r[:, 1]) < 4600)
    out = []
    k = 0
    while k < len(r):
        if not free[k]:
            k += 1
            continue
        j = k
        while j + 1 < len(r) and free[j + 1]:
            j += 1
        dv = np.diff(r[k : j + 1, 3:6], axis=0)
        smooth = np.all(np.abs(dv[:, :2]) < 5) and np.all(np.abs(dv[:, 2] + GRAVITY_ROW) < 1)
        h0, h1 = np.hypot(*r[k, 3:5]), np.hypot(*r[j, 3:5])
        w0, w1 = np.linalg.norm(r[k, 6:9]), np.linalg.norm(r[j, 6:9])
        if j - k >= 30 and smooth and h0 > 200 and w0 > 1:
            t = (j - k) * ROW_S
            out.append((np.log(h1 / h0) / t, (w1 - w0) / (w0 * t)))
        k = j + 1
    return out


def final_roll(m, r):
    """(T, |dx0|, |dv0|, |dv0| T, |dx last|, |dx last - (dx0 + dv0 T)|) if both end rolling."""
    both = (np.abs(m[:, 2] - REST_Z_UU) < 0.3) & (np.abs(m[:, 5]) < 1.0)
    both &= (np.abs(r[:, 2] - REST_Z_UU) < 0.3) & (np.abs(r[:, 5]) < 1.0)
    if not both[-1]:
        return None
    k = len(m) - 1
    while k > 0 and both[k - 1]:
        k -= 1
    t = (len(m) - 1 - k) * ROW_S
    dx0, dv0 = m[k, :2] - r[k, :2], m[k, 3:5] - r[k, 3:5]
    dx1 = m[-1, :2] - r[-1, :2]
    return (t, np.linalg.norm(dx0), np.linalg.norm(dv0), np.linalg.norm(dv0) * t, np.linalg.norm(dx1),
            np.linalg.norm(dx1 - dx0 - dv0 * t))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("replay_dir", help="output folder of `rlsim replay ball --out DIR`")
    args = parser.parse_args()
    paths = sorted(glob.glob(os.path.join(args.replay_dir, "episode_*.csv")))
    if not paths:
        fail(args.replay_dir, 0, 0, "no episode_*.csv (run `rlsim replay ball --out DIR` first)")
    rec_rows, mod_rows, spans, rolls, along = [], [], [], [], []
    for path in paths:
        m, r = read_episode(path)
        if len(m) < 10:
            continue
        rec_rows.append(decay_rows(r))
        mod_rows.append(decay_rows(m))
        spans += free_flight_spans(r)
        roll = final_roll(m, r)
        if roll is not None:
            rolls.append(roll)
        vh = r[-1, 3:5]
        if np.hypot(*vh) > 1.0:
            along.append((m[-1, :2] - r[-1, :2]) @ vh / np.hypot(*vh))
    rec, mod = np.concatenate(rec_rows), np.concatenate(mod_rows)

    print(f"1. rolling rows: {len(rec)} recorded, {len(mod)} model ({len(paths)} episodes)")
    print("  speed uu/s     n rec   rate rec 1/s   n model  rate model 1/s   slip rec uu/s")
    for lo, hi in zip(SPEED_BINS[:-1], SPEED_BINS[1:]):
        a = rec[(rec[:, 0] >= lo) & (rec[:, 0] < hi)]
        b = mod[(mod[:, 0] >= lo) & (mod[:, 0] < hi)]
        if len(a) == 0 or len(b) == 0:
            continue
        print(f"  {lo:4d}-{hi:<5d} {len(a):8d} {np.median(a[:, 1]):14.5f} {len(b):9d}"
              f" {np.median(b[:, 1]):15.5f} {np.median(a[:, 2]):15.4f}")
    s = np.array(spans)
    if len(s):
        print(f"2. recorded free flight ({len(s)} spans): horizontal speed decay median {np.median(s[:, 0]):.5f}"
              f" 1/s; |omega| change median {np.median(s[:, 1]):.5f} 1/s,"
              f" max abs {np.abs(s[:, 1]).max():.5f}")
    if rolls:
        o = np.array(rolls)
        print(f"3. {len(o)} episodes end rolling (model and recorded), median (p90):")
        for i, name in enumerate(["final roll, s", "|dx| at its start, uu", "|dv| at its start, uu/s",
                                  "|dv| at its start x T, uu", "|dx| at the last row, uu",
                                  "|dx_last - (dx0 + dv0 T)|"]):
            print(f"  {name:26s} {np.median(o[:, i]):8.3f} ({np.percentile(o[:, i], 90):.3f})")
    if along:
        a = np.array(along)
        print(f"4. along-track error at the last row ({len(a)} episodes): median {np.median(a):.3f} uu,"
              f" overshoot in {np.mean(a > 0):.0%}")


if __name__ == "__main__":
    main()
