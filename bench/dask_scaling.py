#!/usr/bin/env python3
"""Scaling of rlfit.dask's fit on this machine: per-shard cost and the overhead per solver step.

    PYTHONPATH=build/python /usr/bin/python3 bench/dask_scaling.py ball DIR \\
        [--workers 1,2] [--max-iterations 4] [--rounds 3] [--rlfit build/rlfit]

For each worker count W (a LocalCluster of W one-thread worker processes, one shard per worker)
it runs the same fit `--rounds` times and reports, per map of the fit (one per solver
evaluation): the wall time the client waits, the longest task's compute time on a worker (from
Dask's task stream) and their difference, the overhead (scheduling, CBOR messages, the client's
Ceres step and its per-episode blocks). It also runs the fit in this process with the shards
evaluated one after another (no Dask: the per-shard cost alone) and, with --rlfit, `rlfit fit
--threads W`. Medians over rounds; the machine is shared, so read ratios within one run.

On N hosts a fit takes about  steps x (shard cost x S / N + overhead)  for S shards of equal
size; the per-shard cost below is what one shard's evaluation costs one core.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

import rlfit
import rlfit.dask
from rlfit import _rlfit


def fit_options(args):
    return dict(max_iterations=args.max_iterations, quiet=True)


def timed_local_fit(args, shards):
    """The fit in this process, shards one after another: per map, each shard's time."""
    maps = []

    def local(task, payloads):
        times = []
        answers = []
        for p in payloads:
            t = time.perf_counter()
            answers.append(_rlfit._run_shard_task(task, p))
            times.append(time.perf_counter() - t)
        maps.append((task, times))
        return answers

    t = time.perf_counter()

    class NoClient:  # rlfit.dask.fit reads the worker count from the client
        def scheduler_info(self):
            return {"workers": {}}
    rlfit.dask.fit(args.model, args.paths, client=NoClient(), shards=shards, _map=local,
                   **fit_options(args))
    return time.perf_counter() - t, maps


def timed_dask_fit(args, client):
    import distributed
    maps = []
    real = rlfit.dask.shard_map(client)

    def timed(task, payloads):
        t = time.perf_counter()
        out = real(task, payloads)
        maps.append((task, time.perf_counter() - t))
        return out

    t = time.perf_counter()
    with distributed.get_task_stream(client) as ts:
        rlfit.dask.fit(args.model, args.paths, client=client, _map=timed, **fit_options(args))
    total = time.perf_counter() - t
    # Per map, the longest task's compute (tasks are keyed rlfit-TASK-TAG-K).
    compute = {}
    for rec in ts.data:
        key = rec["key"]
        tag = key.rsplit("-", 1)[0]
        c = sum(s["stop"] - s["start"] for s in rec["startstops"] if s["action"] == "compute")
        compute.setdefault(tag, []).append(c)
    longest = [max(v) for v in compute.values()]
    return total, maps, longest


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("model")
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--max-iterations", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--rlfit", default="")
    args = ap.parse_args()
    import distributed

    rows = []
    for w in [int(x) for x in args.workers.split(",")]:
        walls, per_map, overheads, shard_costs, steps, cli, client_s = [], [], [], [], [], [], []
        for _ in range(args.rounds):
            total, maps = timed_local_fit(args, w)
            sums = [t for task, t in maps if task == "sums"]
            shard_costs += [x for ts in sums for x in ts]
        cluster = distributed.LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                                           dashboard_address=":0")
        client = distributed.Client(cluster)
        try:
            rlfit.dask.fit(args.model, args.paths, client=client, **fit_options(args))  # warm
            for _ in range(args.rounds):
                total, maps, longest = timed_dask_fit(args, client)
                walls.append(total)
                sums = [t for task, t in maps if task == "sums"]
                steps.append(len(sums))
                client_s.append((total - sum(t for _, t in maps)) / len(sums))
                per_map += sums
                overheads += [t - c for t, c in zip([t for _, t in maps], longest)
                              if t - c >= 0]
        finally:
            client.close()
            cluster.close()
        if args.rlfit:
            for _ in range(args.rounds):
                t = time.perf_counter()
                subprocess.run([args.rlfit, "fit", args.model, *args.paths, "--quiet",
                                "--threads", str(w), "--max-iterations",
                                str(args.max_iterations)], check=True,
                               stdout=subprocess.DEVNULL)
                cli.append(time.perf_counter() - t)
        med = statistics.median
        rows.append((w, med(walls), med(steps), med(per_map), med(shard_costs), med(overheads),
                     max(overheads), med(client_s), med(cli) if cli else float("nan")))
    print(f"{'workers':>7} {'fit s':>8} {'maps':>5} {'map s':>7} {'shard s':>8} "
          f"{'overhead s':>10} {'max':>6} {'client s/step':>13} {'rlfit --threads W s':>20}")
    for r in rows:
        print(f"{r[0]:>7} {r[1]:>8.2f} {r[2]:>5.0f} {r[3]:>7.3f} {r[4]:>8.3f} {r[5]:>10.3f} "
              f"{r[6]:>6.3f} {r[7]:>13.4f} {r[8]:>20.2f}")


if __name__ == "__main__":
    sys.exit(main())
