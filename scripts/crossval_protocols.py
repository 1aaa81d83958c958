#!/usr/bin/env python3
"""A candidate against a base by `rlfit crossval` under several protocols that should not matter
(fold counts, rollout strides, the start, the episodes' order), and the keep rule of NOTES'
"How much crossval moves by itself" (issue 12, noise27).

Each protocol runs once per arm into OUT/PROTOCOL/{base,candidate}/ (a folder that already
holds replay_summary.json is reused, so an interrupted comparison resumes). The figures are
the open-loop |dx| medians and p90s over episodes (per-episode medians) at 2 s, 5 s and the
last row; for episodes shorter than 5 s (the car sets, 4.9 s) at 1 s, 2 s and the last row. A
figure is LOST when the candidate is worse in at least n-1 of the n protocols, or its mean
change over them is worse than the base's own standard deviation over them; WON by the mirror
conditions. Keep: no figure lost and at least one won.

  scripts/crossval_protocols.py --base main/build/rlfit --candidate wt/build/rlfit --out DIR
  scripts/crossval_protocols.py --base build/rlfit --candidate build/rlfit \
      --candidate-env RLFIT_SEAM25=3,1 --out DIR          (a scratch switch)
  scripts/crossval_protocols.py --base build/rlfit --candidate build/rlfit \
      --candidate-args="--hold recovery --init /tmp/start.json" --out DIR    (other options)
  scripts/crossval_protocols.py --model wall --folder car_control/wall_driving ...  (a car model)
--base-args / --candidate-args are split like a shell line and follow each run's protocol
arguments; an option a protocol sets itself (the init protocol's --init) is refused there.
Exit status: 0 keep, 1 not kept, 2 a run failed or bad arguments.
"""
import argparse
import json
import os
import random
import shlex
import statistics
import subprocess
import sys

# name -> extra `rlfit crossval` arguments; "SHUFFLED" stands for the recordings named one by
# one in a fixed random order (crossval puts episode i of its list in fold i % K).
PROTOCOLS = {
    "folds3": ["--folds", "3"],
    "folds4": ["--folds", "4"],
    "folds5": ["--folds", "5"],
    "folds6": ["--folds", "6"],
    "folds8": ["--folds", "8"],
    "stride0.07": ["--folds", "4", "--stride", "0.07"],
    "stride0.13": ["--folds", "4", "--stride", "0.13"],
    "init": ["--folds", "4", "--init", "results/MODEL/coeffs.json"],
    "shuffled": ["--folds", "4", "SHUFFLED"],
}
QUICK = ["folds3", "folds4", "folds5", "shuffled"]
FIGURES = [(2.0, "median"), (2.0, "p90"), (5.0, "median"), (5.0, "p90"), ("last", "median"),
           ("last", "p90")]
# Episodes without a 5 s horizon (the car sets' 301 rows, 4.9 s) are judged at 1 s instead.
SHORT_FIGURES = [(1.0, "median"), (1.0, "p90"), (2.0, "median"), (2.0, "p90"), ("last", "median"),
                 ("last", "p90")]
SHUFFLE_SEED = 27


def quantile(xs, p):
    """Linear interpolation between order statistics (numpy's default)."""
    xs = sorted(xs)
    k = (len(xs) - 1) * p
    f = int(k)
    c = min(f + 1, len(xs) - 1)
    return xs[f] + (xs[c] - xs[f]) * (k - f)


def figures(run_dir):
    """{(horizon, 'median'|'p90'): value} over the episodes' open-loop |dx| medians."""
    path = os.path.join(run_dir, "replay_summary.json")
    with open(path) as f:
        d = json.load(f)
    per = {}
    for e in d["errors"]:
        if e["quantity"] != "dx" or e["mode"] != "open_loop" or e["episode"] is None:
            continue
        if e["median"] is None:  # no covered row at that horizon (a part shorter than it)
            continue
        h = "last" if e["horizon_s"] is None else e["horizon_s"]
        per.setdefault(h, []).append(e["median"])
    out = {}
    for h, stat in (FIGURES if 5.0 in per else SHORT_FIGURES):
        if h not in per:
            raise ValueError(f"{path}: no open-loop |dx| per episode at horizon {h}")
        out[(h, stat)] = quantile(per[h], 0.5 if stat == "median" else 0.9)
    return out


def judge(base, cand):
    """Per figure: (mean change, base sd, better, worse, verdict) from per-protocol figures."""
    n = len(base)
    out = {}
    for key in base[0]:
        xs = [b[key] for b in base]
        d = [c[key] - b[key] for b, c in zip(base, cand)]
        sd = statistics.stdev(xs) if n > 1 else 0.0
        mean = statistics.mean(d)
        better = sum(1 for v in d if v < 0)
        worse = sum(1 for v in d if v > 0)
        if worse >= n - 1 or mean > sd:
            verdict = "loss"
        elif better >= n - 1 or mean < -sd:
            verdict = "win"
        else:
            verdict = "neither"
        out[key] = (mean, sd, better, worse, verdict)
    return out


def keep(verdicts):
    v = [x[4] for x in verdicts.values()]
    return "loss" not in v and "win" in v


def recordings(data_root, model_folder):
    folder = os.path.join(data_root, model_folder)
    names = sorted(n for n in os.listdir(folder) if n.startswith("episode_") and n.endswith(".csv"))
    random.Random(SHUFFLE_SEED).shuffle(names)
    return [os.path.join(folder, n) for n in names]


def run(rlfit, env_pairs, model, args, out_dir, cwd):
    if os.path.exists(os.path.join(out_dir, "replay_summary.json")):
        return
    env = dict(os.environ)
    for pair in env_pairs:
        name, _, value = pair.partition("=")
        env[name] = value
    cmd = [rlfit, "crossval", model, "--quiet", "--out", out_dir] + args
    os.makedirs(os.path.dirname(out_dir), exist_ok=True)  # rlfit wants the parent to exist
    r = subprocess.run(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:6])} ...: exit {r.returncode}: {r.stderr.strip()}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="rlfit binary of the base (main)")
    ap.add_argument("--candidate", required=True, help="rlfit binary of the candidate")
    ap.add_argument("--base-env", action="append", default=[], metavar="VAR=VALUE")
    ap.add_argument("--candidate-env", action="append", default=[], metavar="VAR=VALUE")
    ap.add_argument("--base-args", action="append", default=[], metavar="'ARGS'",
                    help="more `rlfit crossval` arguments for the base's runs (write "
                         "--base-args='--hold drag': a value starting with -- needs the =)")
    ap.add_argument("--candidate-args", action="append", default=[], metavar="'ARGS'",
                    help="the same for the candidate's runs, e.g. --candidate-args='--hold recovery'")
    ap.add_argument("--out", required=True, help="folder of the runs (reused where complete)")
    ap.add_argument("--model", default="ball")
    ap.add_argument("--protocols", default="all",
                    help="'all', 'quick' (" + ",".join(QUICK) + ") or a comma-separated list")
    ap.add_argument("--data", default=os.environ.get("RLFIT_DATA", ""),
                    help="datasets root (for the shuffled protocol; default $RLFIT_DATA)")
    ap.add_argument("--folder", default="",
                    help="the model's recordings under --data, read by every protocol (without "
                         "it the others read the model's default recordings; the shuffled "
                         "protocol then reads ball_trajectories for the ball and needs it for "
                         "the others)")
    ap.add_argument("--cwd", default=os.getcwd(), help="where the runs start (results/ is read from it)")
    a = ap.parse_args(argv)
    names = (list(PROTOCOLS) if a.protocols == "all" else QUICK if a.protocols == "quick"
             else a.protocols.split(","))
    unknown = [n for n in names if n not in PROTOCOLS]
    if unknown or len(names) < 2:
        print(f"crossval_protocols: unknown protocol(s) {unknown} or fewer than two", file=sys.stderr)
        return 2
    extra = {"base": [x for line in a.base_args for x in shlex.split(line)],
             "candidate": [x for line in a.candidate_args for x in shlex.split(line)]}
    for name in names:
        for arm, args in extra.items():
            twice = [x for x in args if x.startswith("--") and x in PROTOCOLS[name]]
            if twice:
                print(f"crossval_protocols: protocol {name} sets {twice[0]} itself: not in "
                      f"--{arm}-args", file=sys.stderr)
                return 2
    base, cand = [], []
    try:
        for name in names:
            args = [x.replace("MODEL", a.model) for x in PROTOCOLS[name]]
            if "SHUFFLED" in args:
                folder = a.folder or ("ball_trajectories" if a.model == "ball" else "")
                if not a.data or not folder:
                    raise RuntimeError("protocol shuffled needs --data or $RLFIT_DATA, and "
                                       "--folder for a model other than the ball")
                args.remove("SHUFFLED")
                args += recordings(a.data, folder)
            elif a.folder:
                if not a.data:
                    raise RuntimeError("--folder needs --data or $RLFIT_DATA")
                args.append(os.path.join(a.data, a.folder))
            for arm, binary, env, into in (("base", a.base, a.base_env, base),
                                           ("candidate", a.candidate, a.candidate_env, cand)):
                d = os.path.abspath(os.path.join(a.out, name, arm))
                run(os.path.abspath(binary), env, a.model, args + extra[arm], d, a.cwd)
                into.append(figures(d))
    except (RuntimeError, ValueError, OSError) as e:
        print(f"crossval_protocols: {e}", file=sys.stderr)
        return 2
    keys = list(base[0])
    print("protocol      " + "".join(f"{str(h) + ' ' + s:>16}" for h, s in keys))
    for name, b, c in zip(names, base, cand):
        print(f"{name:<14}" + "".join(f"{b[k]:>8.3f}{c[k] - b[k]:>+8.3f}" for k in keys))
    verdicts = judge(base, cand)
    print(f"\nover {len(names)} protocols: figure, mean change (candidate - base), base sd, "
          "better / worse, verdict")
    for (h, s), (mean, sd, better, worse, v) in verdicts.items():
        print(f"  {str(h) + ' ' + s:<12} {mean:+9.3f} {sd:8.3f}  {better} / {worse}  {v}")
    kept = keep(verdicts)
    print("keep" if kept else "not kept")
    return 0 if kept else 1


if __name__ == "__main__":
    sys.exit(main())
