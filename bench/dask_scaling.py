#!/usr/bin/env python3
"""Scaling of rlfit.dask's fit on this machine: per-shard cost and the overhead per solver step.

    PYTHONPATH=build/python /usr/bin/python3 bench/dask_scaling.py ball DIR \\
        [--workers 1,2] [--max-iterations 4] [--rounds 3] [--rlfit build/rlfit]

For each worker count W (a LocalCluster of W one-thread worker processes, one shard per worker)
it runs the same fit `--rounds` times and reports, per map of the fit (one per solver
evaluation): the wall time the client waits, the longest task's compute time on a worker (from
Dask's task stream) and their difference, the overhead (scheduling, CBOR messages, the client's
Ceres step and its per-episode blocks). It also runs the fit in this process with the shards
evaluated one after another (no Dask: the per-shard cost alone, in CPU seconds of one core)
and, with --rlfit, `rlfit fit --threads W`. Medians over rounds; the machine is shared, so read ratios within one run.

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
            t = time.process_time()  # one thread: its CPU time, not the shared machine's wall
            answers.append(_rlfit._run_shard_task(task, p))
            times.append(time.process_time() - t)
        maps.append((task, times, sum(len(a) for a in answers)))
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
        maps.append((task, time.perf_counter() - t, sum(len(a) for a in out)))
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

    def jacobian(maps):
        """The "sums" maps split by kind: a Jacobian map's answers hold p x p numbers per
        episode, a cost-only map's one, so their sizes fall in two groups."""
        sizes = [m[-1] for m in maps if m[0] == "sums"]
        cut = 4 * min(sizes)
        return [m for m in maps if m[0] == "sums" and m[-1] > cut], \
            [m for m in maps if m[0] == "sums" and m[-1] <= cut]

    med = statistics.median
    rows = []
    for w in [int(x) for x in args.workers.split(",")]:
        r = {k: [] for k in ("fit", "steps", "jac_map", "cost_map", "jac_shard", "cost_shard",
                             "overhead", "client", "cli")}
        for _ in range(args.rounds):
            _, maps = timed_local_fit(args, w)
            jac, cost = jacobian(maps)
            r["jac_shard"] += [x for m in jac for x in m[1]]
            r["cost_shard"] += [x for m in cost for x in m[1]]
        cluster = distributed.LocalCluster(n_workers=w, threads_per_worker=1, processes=True,
                                           dashboard_address=":0")
        client = distributed.Client(cluster)
        try:
            rlfit.dask.fit(args.model, args.paths, client=client, **fit_options(args))  # warm
            for _ in range(args.rounds):
                total, maps, longest = timed_dask_fit(args, client)
                jac, cost = jacobian(maps)
                r["fit"].append(total)
                r["steps"].append(len(jac) + len(cost))
                r["jac_map"] += [m[1] for m in jac]
                r["cost_map"] += [m[1] for m in cost]
                r["overhead"] += [m[1] - c for m, c in zip(maps, longest) if m[1] >= c]
                r["client"].append((total - sum(m[1] for m in maps)) / (len(jac) + len(cost)))
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
                r["cli"].append(time.perf_counter() - t)
        rows.append((w, {k: (med(v), max(v)) if v else (float("nan"),) * 2
                         for k, v in r.items()}))
    print("medians (max) over rounds and maps; s = seconds; shard CPU s: one shard's "
          "evaluation in this process, one core")
    print(f"{'W':>2} {'fit s':>7} {'maps':>4} {'Jacobian map s':>14} {'cost map s':>10} "
          f"{'shard CPU s: Jacobian':>21} {'cost':>6} {'overhead/map s':>15} "
          f"{'client s/map':>12} {'rlfit --threads W s':>19}")
    for w, v in rows:
        print(f"{w:>2} {v['fit'][0]:>7.2f} {v['steps'][0]:>4.0f} {v['jac_map'][0]:>14.3f} "
              f"{v['cost_map'][0]:>10.3f} {v['jac_shard'][0]:>21.3f} {v['cost_shard'][0]:>6.3f} "
              f"{v['overhead'][0]:>8.3f} ({v['overhead'][1]:.3f}) {v['client'][0]:>12.4f} "
              f"{v['cli'][0]:>19.2f}")


if __name__ == "__main__":
    sys.exit(main())
