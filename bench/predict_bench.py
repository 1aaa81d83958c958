#!/usr/bin/python3
"""Batch ball prediction from Python: 1,000 six-second trajectories (366 rows of 1/60.96 s)
with rlfit.Model("ball").predict_batch, wall time, against the same batch in C++
(bench/predict_bench.cc, BM_BallBatch1000x6s) run in the same session, alternating.

Start states: the first row of every episode of ball_trajectories in the reader's order,
repeated up to 1,000 (as predict_bench.cc). Prints the median of the repetitions of each side
and their ratio per trajectory.

    PYTHONPATH=build/python bench/predict_bench.py --cpp build/predict_bench --rounds 5
"""
import argparse
import json
import os
import statistics
import subprocess
import time

import numpy as np

import rlfit

TRAJECTORIES = 1000
DURATION_S = 6.0


def start_states(data_root):
    eps = rlfit.read_recording(os.path.join(data_root, "ball_trajectories"))
    starts = np.array([ep["states"][0] for ep in eps])
    return starts[np.arange(TRAJECTORIES) % len(starts)]


def python_times(model, states, threads, reps, clock):
    times = []
    for _ in range(reps):
        t0 = clock()
        out = model.predict_batch(states, DURATION_S, threads=threads)
        times.append(clock() - t0)
    assert out.shape == (TRAJECTORIES, 366, 10)
    return times


def cpp_times(cpp, threads, reps, key):
    p = subprocess.run([cpp, "--benchmark_filter=BM_BallBatch1000x6s/%d/" % threads,
                        "--benchmark_repetitions=%d" % reps, "--benchmark_format=json"],
                       capture_output=True, text=True, check=True)
    runs = json.loads(p.stdout)["benchmarks"]
    # Time per iteration (one batch), ms; the repetitions only (not the aggregates).
    return [b[key] / 1e3 for b in runs if b.get("run_type") == "iteration"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cpp", default="build/predict_bench", help="the C++ benchmark program")
    ap.add_argument("--rounds", type=int, default=5, help="alternations of the two sides")
    ap.add_argument("--reps", type=int, default=5, help="repetitions per side and round")
    ap.add_argument("--threads", type=int, default=0, help="0 = every core")
    ap.add_argument("--cpu", action="store_true",
                    help="CPU time of the process instead of wall time (use with --threads 1: "
                         "Google Benchmark's cpu_time counts the main thread only)")
    args = ap.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    key = "cpu_time" if args.cpu else "real_time"

    root = rlfit.data_root()
    model = rlfit.Model("ball")
    states = start_states(root)
    model.predict_batch(states[:10], DURATION_S)  # loads the arena before timing
    py, cpp = [], []
    for _ in range(args.rounds):
        py += python_times(model, states, args.threads, args.reps, clock)
        cpp += cpp_times(args.cpp, args.threads, args.reps, key)
    py_med, cpp_med = statistics.median(py), statistics.median(cpp)
    print("%s time, threads %s, %d trajectories x %g s, %d repetitions each"
          % ("CPU" if args.cpu else "wall", args.threads or os.cpu_count(), TRAJECTORIES,
             DURATION_S, len(py)))
    print("python predict_batch: median %.1f ms per batch, %.1f us per trajectory (min %.1f, max %.1f ms)"
          % (py_med * 1e3, py_med * 1e6 / TRAJECTORIES, min(py) * 1e3, max(py) * 1e3))
    print("C++ PredictTrajectories: median %.1f ms per batch, %.1f us per trajectory (min %.1f, max %.1f ms)"
          % (cpp_med * 1e3, cpp_med * 1e6 / TRAJECTORIES, min(cpp) * 1e3, max(cpp) * 1e3))
    print("python / C++: %.3f" % (py_med / cpp_med))


if __name__ == "__main__":
    main()
