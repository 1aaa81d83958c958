#!/usr/bin/env python3
"""Rewrites a recording of the Lobot datasets' formats (13-column ball, 25-column car, 26-column
timed car, {...}-wrapped .txt rows with Mathematica exponents) into the named-column format of
README "Your own recordings": a header of column names, angles in radians, one row per row.

Usage: scripts/to_named_csv.py IN OUT [--no-handbrake] [--columns NAMES]

  --no-handbrake   leave the handbrake column out (the tools then infer it where a model needs
                   it, and say so), as for recordings that do not record it
  --columns NAMES  the output's column order, comma-separated (default: the input's order); t
                   is left out for an untimed input, a name the format does not know is written
                   as a column of zeros

Rows before a car spawns (|yaw| above 32768 rotation units: the datasets' unwrapped yaw, at the
start and after a restart of a timed recording) are dropped: the named format has none. Every other value is written as the shortest text that reads
back to the same double, so the tools read the same rows from both files (only the source row
numbers move, by the header line and the dropped rows). Standard library only.
"""
import argparse
import math
import os
import sys

BALL = ["t", "x", "y", "z", "vx", "vy", "vz", "pitch", "yaw", "roll", "wx", "wy", "wz"]
CAR = ["x", "y", "z", "vx", "vy", "vz", "pitch", "yaw", "roll", "wx", "wy", "wz", "supersonic",
       "jumped", "double_jumped", "on_ground", "boost_amount", "throttle", "steer", "input_pitch",
       "input_yaw", "input_roll", "jump", "boost", "handbrake"]
ANGLES = ("pitch", "yaw", "roll")
# Radians per rotation unit, as the tools compute it (pi / 32768: a power of two, exact).
RAD_PER_UNIT = math.pi / 32768.0


def number(text):
    text = text.strip()
    if "*^" in text:
        text = text.replace("*^", "e")
    return float(text)


def shortest(v):
    if v == 0.0:
        return "0"
    r = repr(v)
    return r[:-2] if r.endswith(".0") else r


def rows_of(path):
    with open(path) as f:
        for line in f:
            line = line.strip().strip("{}").strip()
            if line:
                yield [number(c) for c in line.split(",")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--no-handbrake", action="store_true")
    ap.add_argument("--columns", default="")
    a = ap.parse_args(argv)
    rows = list(rows_of(a.input))
    if not rows:
        sys.exit(f"to_named_csv: {a.input}: no rows")
    width = len(rows[0])
    if width == 13:
        names = BALL
    elif width == 25:
        names = CAR
    elif width == 26:
        names = ["t"] + CAR
    else:
        sys.exit(f"to_named_csv: {a.input}: {width} columns, not a datasets recording")
    car = width != 13
    out_names = a.columns.split(",") if a.columns else [n for n in names]
    if "t" not in names:  # an untimed recording: no time column to write
        out_names = [n for n in out_names if n != "t"]
    if a.no_handbrake:
        out_names = [n for n in out_names if n != "handbrake"]
    lines = [",".join(out_names)]
    for r in rows:
        cells = dict(zip(names, r))
        if car and abs(cells["yaw"]) > 32768:
            continue  # before the car spawns (at the start, or after a restart)
        for n in ANGLES:
            cells[n] = cells[n] * RAD_PER_UNIT
        lines.append(",".join(shortest(cells.get(n, 0.0)) for n in out_names))
    tmp = a.output + ".tmp"
    with open(tmp, "w") as f:
        f.write("\n".join(lines) + "\n")
    os.replace(tmp, a.output)


if __name__ == "__main__":
    main()
