#!/usr/bin/python3
"""Reproduces one row of `rlsim replay`'s open-loop table from Python (the rlfit module).

Replays the recordings with rlfit.replay, then recomputes the row from the predicted and
recorded arrays alone: for each episode of the split, the error at the row closest to
(first covered row's time + horizon), then median, p90 (linear interpolation, numpy's
default) and max over the episodes. Prints the row as the table does and the figures of the
same row in the replay summary; exit 1 if they differ.

    PYTHONPATH=build/python scripts/replay_row.py aerial --split heldout --quantity dx --horizon 2
    # quantity     horizon    median       p90       max      n
    #   |dx| uu      2s         6.112      29.7      35.6      3
"""
import argparse
import math
import sys

import numpy as np

import rlfit

LABELS = {"dx": ("|dx| uu", "x"), "dv": ("|dv| uu/s", "v"), "domega": ("|dw| rad/s", "omega")}
COLUMNS = {"x": slice(0, 3), "v": slice(3, 6), "omega": slice(6, 9)}


def row_at_horizon(t_s, step_dt_s, start, horizon_s):
    """Index of the row closest to t_s[start] + horizon_s, or -1 (src/replay/metrics.cc)."""
    target = t_s[start] + horizon_s
    k = start + int(np.searchsorted(t_s[start:], target, side="left"))
    if k >= len(t_s):
        last = len(t_s) - 1
        half_row = 0.5 * step_dt_s[last - 1] if last > 0 else 0.0
        return last if t_s[last] + half_row >= target else -1
    if k > start and target - t_s[k - 1] < t_s[k] - target:
        k -= 1
    return k


def fmt(v):
    """The table's number format (Fmt in src/replay/replay.cc)."""
    if abs(v) >= 1000:
        return "%.0f" % v
    if abs(v) >= 10:
        return "%.1f" % v
    return "%.3f" % v


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("paths", nargs="*", help="recordings (default: the model's datasets)")
    ap.add_argument("--split", default="heldout", help="all, train, heldout or unseen")
    ap.add_argument("--quantity", default="dx", choices=sorted(LABELS))
    ap.add_argument("--horizon", type=float, default=2.0, help="s, one of the report horizons")
    ap.add_argument("--data", default="", help="datasets root")
    args = ap.parse_args()

    r = rlfit.replay(args.model, args.paths, data_root=args.data)
    label, field = LABELS[args.quantity]
    errors = []
    for ep in r["episodes"]:
        if args.split != "all" and ep["split"] != args.split:
            continue
        covered = np.flatnonzero(~np.isnan(ep["predicted"][:, 0]))
        if len(covered) == 0:
            continue
        a = covered[0]
        b = a  # end of the first covered stretch (the open-loop figures come from it)
        while b + 1 < len(ep["t_s"]) and not np.isnan(ep["predicted"][b + 1, 0]):
            b += 1
        row = row_at_horizon(ep["t_s"], ep["step_dt_s"], a, args.horizon)
        if row < 0 or row > b:
            continue
        d = ep["predicted"][row, COLUMNS[field]] - ep[field][row]
        errors.append(math.sqrt((d[0] * d[0] + d[1] * d[1]) + d[2] * d[2]))
    if not errors:
        sys.exit("replay_row.py: no episode of split %s reaches %g s" % (args.split, args.horizon))
    values = np.array(errors)
    mine = (float(np.percentile(values, 50)), float(np.percentile(values, 90)), float(values.max()))

    print("  %-12s %-6s  %8s  %8s  %8s  %5s" % ("quantity", "horizon", "median", "p90", "max", "n"))
    print("  %-12s %-6s  %8s  %8s  %8s  %5d" % (label, "%gs" % args.horizon, fmt(mine[0]),
                                              fmt(mine[1]), fmt(mine[2]), len(errors)))
    agg = [e for e in r["summary"]["errors"]
           if e["episode"] is None and e["split"] == args.split and e["mode"] == "open_loop"
           and e["quantity"] == args.quantity and e["horizon_s"] == args.horizon]
    if len(agg) != 1:
        sys.exit("replay_row.py: the summary has no such row (horizon not reported?)")
    theirs = (agg[0]["median"], agg[0]["p90"], agg[0]["max"])
    print("replay summary: median %r p90 %r max %r n %d" % (*theirs, agg[0]["n"]))
    print("from the arrays: median %r p90 %r max %r n %d" % (*mine, len(errors)))
    same = agg[0]["n"] == len(errors) and all(
        math.isclose(m, t, rel_tol=1e-12, abs_tol=1e-12) for m, t in zip(mine, theirs))
    print("match" if same else "MISMATCH")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
