"""Replay, fit and cross-validation of rlfit's models on a Dask cluster (rlfit.dask).

    python3 -m rlfit.dask replay|fit|crossval MODEL [PATHS...] --scheduler local:N|ADDRESS \\
        [--out OUT] [the options of rlsim replay / rlfit fit / rlfit crossval]

or from Python (a notebook):

    from distributed import Client
    client = Client("tcp://scheduler:8786")        # or Client(LocalCluster(n_workers=2))
    rlfit.dask.replay("aerial", paths, client=client)   # dict: summary, table, warnings
    rlfit.dask.fit("aerial", paths, client=client, out="fit.json")
    rlfit.dask.crossval("aerial", paths, client=client, folds=4, out="cv")

The work is the tools' own (fit/distributed.h in the C++ library): the recording files are cut
into shards in order, each shard is one Dask task per step, and a worker reads its shard's files
by path (the paths must name the same files on the client and on every worker: a shared file
system, or the same copy on each host). Replay gathers per-episode records and recomputes the
tables on the client; the fit runs Ceres on the client over one residual block per training
episode whose cost, gradient and Gauss-Newton matrix the workers sum (each solver evaluation at
new coefficients is one map; the shards stay built in the worker processes between them).
Output folders (--out of replay and crossval) are staged beside the target and the workers write
the trajectory CSVs into that staged folder, so it too must be on a shared file system.
A worker lost mid-job is replaced by Dask and its task rerun elsewhere; the result does not
change (a shard rebuilt from its files gives the same sums, bit for bit).
"""
import argparse
import os
import sys
import uuid

from rlfit import _rlfit

__all__ = ["replay", "fit", "crossval", "connect", "main"]


def _task(task, payload):
    """What a worker runs: one task on one shard (bytes in, bytes out)."""
    return _rlfit._run_shard_task(task, payload)


def _workers(client):
    return sorted(client.scheduler_info()["workers"])


def shard_map(client):
    """The map the C++ side calls: one Dask task per payload, shard k preferring worker
    k mod W (so a shard stays built where it was built) but free to run elsewhere; answers in
    the payloads' order."""
    def run(task, payloads):
        workers = _workers(client)
        tag = uuid.uuid4().hex
        futures = [
            client.submit(_task, task, p, key=f"rlfit-{task}-{tag}-{k}", pure=False,
                          workers=[workers[k % len(workers)]] if workers else None,
                          allow_other_workers=True)
            for k, p in enumerate(payloads)]
        return client.gather(futures)
    return run


def _paths(paths):
    if isinstance(paths, (str, bytes, os.PathLike)):
        paths = [paths]
    return [os.fsencode(p) for p in paths]


def _path(p):
    return os.fsencode(p) if p else b""


def _options(client, shards, default_per_worker, **given):
    workers = len(_workers(client)) or 1
    given["shards"] = shards if shards else default_per_worker * workers
    return given


def replay(model, paths=(), *, client, coeffs="", data_root="", horizons_s=(), window_s=0.5,
           out=None, force=False, plots=False, keep_going=False, reference="",
           handbrake_unrecorded=False, clock_origin=None, shards=None, worker_threads=1,
           _map=None):
    """`rlsim replay MODEL PATHS` on the cluster of `client`: dict summary (the content of
    replay_summary.json without provenance), table (what rlsim replay prints), warnings. With
    `out`, the same folder rlsim replay --out writes; with `keep_going`, as --keep-going: a file
    that cannot be read is named with its reason and the others replayed. `reference`,
    `handbrake_unrecorded`, `clock_origin`: the tools' --reference, --handbrake-unrecorded and
    --clock-origin. `shards`: groups of files (default 2 per worker)."""
    o = _options(client, shards, 2, model=model, paths=_paths(paths), coeffs=_path(coeffs),
                 data_root=_path(data_root), horizons_s=list(horizons_s), window_s=window_s,
                 out=_path(out), force=force, plots=plots, keep_going=keep_going,
                 reference=_path(reference), handbrake_unrecorded=handbrake_unrecorded,
                 clock_origin=clock_origin, worker_threads=worker_threads)
    return _rlfit._dask_replay(o, _map or shard_map(client))


_FIT_DEFAULTS = dict(init="", window_s=1.0, stride_s=0.1, hold=(), free=(), loss="",
                     loss_scale=0.0, max_iterations=50, step_sigmas=0.1, horizons_s=(),
                     tick_rate_hz=None, input_delay_s=None, tick_phase=None,
                     tick_aligned_inputs=None, rotate_with_new_omega=None, data_root="",
                     quiet=True, force=False, keep_going=False, reference="",
                     handbrake_unrecorded=False, clock_origin=None)


def _fit_options(client, model, paths, shards, worker_threads, given):
    unknown = set(given) - set(_FIT_DEFAULTS) - {"holdout_every", "folds", "tail_set", "out",
                                                 "plots"}
    if unknown:
        raise TypeError(f"unknown option(s): {', '.join(sorted(unknown))}")
    o = dict(_FIT_DEFAULTS, **given)
    for key in ("init", "data_root", "out", "plots", "reference"):
        o[key] = _path(o.get(key))
    for key in ("hold", "free", "horizons_s"):
        o[key] = list(o[key])
    return _options(client, shards, 1, model=model, paths=_paths(paths),
                    worker_threads=worker_threads, **o)


def fit(model, paths=(), *, client, out=None, plots=None, holdout_every=4, shards=None,
        worker_threads=1, _map=None, **options):
    """`rlfit fit MODEL PATHS` on the cluster: dict coefficients (the JSON `--out` writes) and
    text (what rlfit fit prints). Options as rlfit fit's, in Python names: init, window_s,
    stride_s, hold, free, loss, loss_scale, max_iterations, step_sigmas, horizons_s,
    tick_rate_hz, input_delay_s, tick_phase, tick_aligned_inputs, rotate_with_new_omega,
    data_root, quiet, force, keep_going, reference, handbrake_unrecorded, clock_origin. `plots`: a folder for the fit's report page (needs `out`), as rlfit fit --plots.
    `shards`: groups of files (default 1 per worker)."""
    o = _fit_options(client, model, paths, shards, worker_threads,
                     dict(options, out=out, holdout_every=holdout_every, plots=plots))
    return _rlfit._dask_fit(o, _map or shard_map(client))


def crossval(model, paths=(), *, client, folds=4, tail_set=0, out=None, shards=None,
             worker_threads=1, _map=None, **options):
    """`rlfit crossval MODEL PATHS` on the cluster: dict summary (the combined held-out
    replay_summary.json content) and text (what rlfit crossval prints); with `out` the same
    folder. `tail_set`: as rlfit crossval --tail-set (the new set's size in the tail table; 0:
    one fold's). Other options as fit's."""
    o = _fit_options(client, model, paths, shards, worker_threads,
                     dict(options, out=out, folds=folds, tail_set=tail_set))
    return _rlfit._dask_crossval(o, _map or shard_map(client))


def connect(scheduler):
    """A distributed.Client for --scheduler: "local:N" starts a LocalCluster of N worker
    processes of one thread each on this host; anything else is a scheduler address."""
    from distributed import Client, LocalCluster
    if scheduler.startswith("local:"):
        n = int(scheduler[len("local:"):])
        if n < 1:
            raise ValueError("--scheduler local:N needs N >= 1")
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               dashboard_address=":0")
        return Client(cluster)
    return Client(scheduler)


def _parser():
    p = argparse.ArgumentParser(
        prog="python3 -m rlfit.dask",
        description="rlsim replay, rlfit fit and rlfit crossval on a Dask cluster: the same "
                    "outputs, the work sharded by recording file.")
    sub = p.add_subparsers(dest="command", required=True)

    def common(cmd):
        cmd.add_argument("model", choices=_rlfit.models())
        cmd.add_argument("paths", nargs="*", help="recording files or folders (default: the "
                         "model's data)")
        cmd.add_argument("--scheduler", required=True,
                         help="local:N (a LocalCluster of N workers here) or a scheduler "
                              "address (tcp://host:8786)")
        cmd.add_argument("--shards", type=int, default=0,
                         help="groups of files, one task each (default: 2 per worker for "
                              "replay, 1 for fit and crossval)")
        cmd.add_argument("--worker-threads", type=int, default=1,
                         help="threads each task evaluates its shard with")
        cmd.add_argument("--data", default="", help="datasets root (as the tools' --data)")
        cmd.add_argument("--force", action="store_true",
                         help="replace an --out rlfit did not write")
        cmd.add_argument("--horizons", type=lambda s: [float(x) for x in s.split(",")],
                         default=[], help="report horizons, s, comma-separated")
        cmd.add_argument("--keep-going", action="store_true",
                         help="name each file that cannot be read, with its reason, and go on "
                              "with the others")
        cmd.add_argument("--reference", default="",
                         help="folder of an earlier model's predictions (as the tools' "
                              "--reference)")
        cmd.add_argument("--handbrake-unrecorded", action="store_true",
                         help="the recordings' handbrake column holds no presses although the "
                              "handbrake was used (as the tools' flag)")
        cmd.add_argument("--clock-origin", type=float, default=None,
                         help="row of the 61 Hz row clock row 0 of each recording sits on (as "
                              "the tools' --clock-origin)")

    r = sub.add_parser("replay", help="rlsim replay")
    common(r)
    r.add_argument("--coeffs", default="", help="'' committed fit, 'seed', or a file")
    r.add_argument("--window", type=float, default=0.5, help="windowed restart spacing, s")
    r.add_argument("--out", default="", help="output folder (replaced as a whole)")
    r.add_argument("--plots", action="store_true", help="also draw OUT/index.html")
    r.add_argument("--quiet", action="store_true", help="(accepted: no progress is shown)")

    for name in ("fit", "crossval"):
        f = sub.add_parser(name, help=f"rlfit {name}")
        common(f)
        f.add_argument("--init", default="")
        f.add_argument("--window", type=float, default=1.0)
        f.add_argument("--stride", type=float, default=0.1)
        f.add_argument("--tick-rate", type=float, default=None)
        f.add_argument("--input-delay", type=float, default=None)
        f.add_argument("--tick-phase", type=float, default=None)
        f.add_argument("--tick-aligned", type=int, choices=(0, 1), default=None)
        f.add_argument("--rotation", type=int, choices=(0, 1), default=None)
        f.add_argument("--hold", action="append", default=[])
        f.add_argument("--free", action="append", default=[])
        f.add_argument("--loss", choices=("huber", "cauchy", "none"), default="")
        f.add_argument("--loss-scale", type=float, default=0.0)
        f.add_argument("--max-iterations", type=int, default=50)
        f.add_argument("--step-sigmas", type=float, default=0.1)
        f.add_argument("--quiet", action="store_true")
        if name == "fit":
            f.add_argument("--out", default="", help="coefficients JSON to write")
            f.add_argument("--plots", default="",
                           help="folder for the fit's report page (needs --out)")
            f.add_argument("--holdout-every", type=int, default=4)
        else:
            f.add_argument("--out", default="", help="output folder (replaced as a whole)")
            f.add_argument("--folds", type=int, default=4)
            f.add_argument("--tail-set", type=int, default=0,
                           help="episodes in the new set of the tail table (0: one fold's)")
    return p


def main(argv=None):
    args = _parser().parse_args(argv)
    try:
        client = connect(args.scheduler)
    except (OSError, ValueError) as e:
        print(f"rlfit.dask: error: --scheduler {args.scheduler}: {e}", file=sys.stderr)
        return 2
    try:
        common = dict(client=client, shards=args.shards or None,
                      worker_threads=args.worker_threads, out=args.out or None,
                      reference=args.reference, handbrake_unrecorded=args.handbrake_unrecorded,
                      clock_origin=args.clock_origin)
        if args.command == "replay":
            r = replay(args.model, args.paths, coeffs=args.coeffs, data_root=args.data,
                       horizons_s=args.horizons, window_s=args.window, force=args.force,
                       plots=args.plots, keep_going=args.keep_going, **common)
            sys.stderr.write(r["warnings"])
            sys.stdout.write(r["table"])
            return 0
        fit_options = dict(
            init=args.init, window_s=args.window, stride_s=args.stride,
            hold=[n for h in args.hold for n in h.split(",")],
            free=[n for h in args.free for n in h.split(",")], loss=args.loss,
            loss_scale=args.loss_scale, max_iterations=args.max_iterations,
            step_sigmas=args.step_sigmas, horizons_s=args.horizons, data_root=args.data,
            quiet=args.quiet, force=args.force, keep_going=args.keep_going,
            tick_rate_hz=args.tick_rate,
            input_delay_s=args.input_delay, tick_phase=args.tick_phase,
            tick_aligned_inputs=None if args.tick_aligned is None else bool(args.tick_aligned),
            rotate_with_new_omega=None if args.rotation is None else bool(args.rotation))
        if args.command == "fit":
            r = fit(args.model, args.paths, holdout_every=args.holdout_every,
                    plots=args.plots or None, **common, **fit_options)
        else:
            r = crossval(args.model, args.paths, folds=args.folds, tail_set=args.tail_set,
                         **common, **fit_options)
        sys.stdout.write(r["text"])
        return 0
    except _rlfit.InputError as e:
        print(f"rlfit.dask: error: {e}", file=sys.stderr)
        return 2
    finally:
        cluster = getattr(client, "cluster", None)
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    # Run as rlfit.dask (not __main__), so that the tasks Dask ships name rlfit.dask._task.
    from rlfit.dask import main as _main
    sys.exit(_main())
