"""Tests of rlfit.dask (ctest `python`) on a LocalCluster of 2 worker processes: replay, fit and
crossval give what rlsim replay, rlfit fit and rlfit crossval give on the same recordings; a
worker killed while its task runs is replaced and the result does not change; a bad file fails
with the tools' error line.

Run: PYTHONPATH=build/python RLFIT_BUILD_DIR=build python3 -m pytest -q python/tests/test_dask.py
"""
import filecmp
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest

import rlfit

distributed = pytest.importorskip("distributed")
import rlfit.dask  # noqa: E402

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("RLFIT_BUILD_DIR", os.path.join(SRC, "build"))
RLSIM = os.path.join(BUILD, "rlsim")
RLFIT = os.path.join(BUILD, "rlfit")
DATA = rlfit.data_root()
needs_data = pytest.mark.skipif(DATA == "", reason="no datasets root")

# The aerial fit on 8 recorded episodes (6 train, 2 held out): ~1 s of fitting, 3 solver steps.
AERIAL = os.path.join(DATA, "car_control", "aerial") if DATA else ""

# The distributed fit sums the same windows' numbers in another order and hands Ceres one
# (p + 1)-row block per episode instead of one per window, so its QR and sums differ in the
# last bits: the coefficients agree to round-off amplified by the problem's conditioning. The
# issue's target (README "rlfit.dask").
COEFF_RELATIVE = 1e-6


def aerial_files(n=8):
    return sorted(os.path.join(AERIAL, f) for f in os.listdir(AERIAL)
                  if f.startswith("episode_"))[:n]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True)


def close(a, b, rel):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def summary(folder):
    with open(os.path.join(folder, "replay_summary.json")) as f:
        j = json.load(f)
    j.pop("options")  # paths as given
    j.pop("git_revision")  # the tools and the module may be built at different commits
    return j


@needs_data
def test_replay_equals_rlsim_replay(client, tmp_path):
    files = aerial_files(6)
    cli, dist = tmp_path / "cli", tmp_path / "dask"
    r = run(RLSIM, "replay", "aerial", *files, "--out", str(cli))
    assert r.returncode == 0, r.stderr
    got = rlfit.dask.replay("aerial", files, client=client, out=dist, shards=4)
    assert got["table"] == r.stdout
    assert summary(cli) == summary(dist)  # per-episode records and aggregates, bit for bit
    names = sorted(os.listdir(cli))
    # the episodes, replay_summary.json, summary.txt and the .rlfit-files guard
    assert names == sorted(os.listdir(dist)) and len(names) == len(files) + 3
    others = [n for n in names if n != "replay_summary.json"]  # compared above
    _, mismatch, errors = filecmp.cmpfiles(cli, dist, others, shallow=False)
    assert mismatch == [] and errors == []


@needs_data
def test_replay_skips_and_references_as_rlsim(client, tmp_path):
    """A file the model does not cover is skipped with rlsim's line (alone, it is an error);
    ball episodes whose dataset manifest names a reference prediction take it, as in rlsim,
    and the same files copied elsewhere (no manifest) have none: a sibling prediction_*.csv
    is never taken for one by its name."""
    ground = os.path.join(DATA, "car_control", "ground_driving_no_handbrake", "episode_00.csv")
    paths = aerial_files(2) + [ground]
    r = run(RLSIM, "replay", "aerial", *paths)
    assert r.returncode == 0 and "skipped" in r.stderr, r.stderr
    got = rlfit.dask.replay("aerial", paths, client=client, shards=3)
    assert got["table"] == r.stdout
    assert got["warnings"] == r.stderr.replace("rlsim: ", "rlfit.dask: ")
    r = run(RLSIM, "replay", "aerial", ground)
    with pytest.raises(rlfit.InputError) as e:
        rlfit.dask.replay("aerial", [ground], client=client)
    assert r.returncode == 2 and r.stderr.strip() == "rlsim: error: " + str(e.value)
    balls = tmp_path / "balls"
    balls.mkdir()
    source = os.path.join(DATA, "ball_trajectories")
    for n in ("000000", "000001", "000002"):
        for kind in ("episode", "prediction"):
            shutil.copy(os.path.join(source, f"{kind}_{n}.csv"), balls)
    in_place = [os.path.join(source, f"episode_{n}.csv") for n in ("000000", "000001", "000002")]
    for paths, kind, name in (([str(balls)], "seed_coefficients", "copied"),
                              (in_place, "shipped_predictions", "in_place")):
        cli, dist = tmp_path / ("cli_" + name), tmp_path / ("dask_" + name)
        r = run(RLSIM, "replay", "ball", *paths, "--out", str(cli))
        assert r.returncode == 0, r.stderr
        got = rlfit.dask.replay("ball", paths, client=client, out=dist, shards=2)
        assert got["summary"]["reference"]["kind"] == kind
        assert got["table"] == r.stdout and summary(cli) == summary(dist)


@needs_data
def test_command_line_facts_as_rlsim(client, tmp_path):
    """Recordings outside any manifest with the tools' facts given: --handbrake-unrecorded and
    --clock-origin (powerslide), --reference (ball) reach the workers' reading as rlsim's, so
    the replay is rlsim's; without them it is another replay (the facts change what is
    measured)."""
    slides, balls, refs = tmp_path / "slides", tmp_path / "balls", tmp_path / "refs"
    for d in (slides, balls, refs):
        d.mkdir()
    for n in ("00", "01", "02"):
        shutil.copy(os.path.join(DATA, "car_control", "ground_driving_handbrake",
                                 f"episode_{n}.csv"), slides)
    for n in ("000000", "000001"):
        source = os.path.join(DATA, "ball_trajectories")
        shutil.copy(os.path.join(source, f"episode_{n}.csv"), balls)
        shutil.copy(os.path.join(source, f"prediction_{n}.csv"), refs / f"episode_{n}.csv")
    cases = (("powerslide", slides, dict(handbrake_unrecorded=True, clock_origin=0.0),
              ["--handbrake-unrecorded", "--clock-origin", "0"]),
             ("ball", balls, dict(reference=str(refs)), ["--reference", str(refs)]))
    for model, folder, facts, flags in cases:
        cli, dist = tmp_path / ("cli_" + model), tmp_path / ("dask_" + model)
        r = run(RLSIM, "replay", model, str(folder), "--out", str(cli), *flags)
        assert r.returncode == 0, r.stderr
        got = rlfit.dask.replay(model, [str(folder)], client=client, out=dist, shards=2,
                                **facts)
        assert got["table"] == r.stdout and summary(cli) == summary(dist)
        bare = rlfit.dask.replay(model, [str(folder)], client=client, shards=2)
        assert bare["table"] != got["table"]
        if model == "ball":
            assert got["summary"]["reference"]["kind"] == "shipped_predictions"
            assert bare["summary"]["reference"]["kind"] == "seed_coefficients"


@needs_data
def test_fit_within_1e6_of_rlfit_fit(client, tmp_path):
    files = aerial_files()
    cli, dist = tmp_path / "cli.json", tmp_path / "dask.json"
    r = run(RLFIT, "fit", "aerial", *files, "--quiet", "--out", str(cli))
    assert r.returncode == 0, r.stderr
    got = rlfit.dask.fit("aerial", files, client=client, out=dist)
    a, b = json.load(open(cli)), json.load(open(dist))
    assert b == got["coefficients"]
    for name, value in a["coefficients"].items():
        assert close(value, b["coefficients"][name], COEFF_RELATIVE), name
        assert close(a["std_errors"][name], b["std_errors"][name], COEFF_RELATIVE), name
    ra, rb = a["fit_report"], b["fit_report"]
    assert (ra["iterations"], ra["residual_blocks"], ra["residuals"]) == \
        (rb["iterations"], rb["residual_blocks"], rb["residuals"])
    assert close(ra["cost_final"], rb["cost_final"], COEFF_RELATIVE)
    assert ra["heldout_before"] == rb["heldout_before"]  # the same start: the same replay
    assert a["provenance"]["train_episodes"] == b["provenance"]["train_episodes"]
    assert a["provenance"]["heldout_episodes"] == b["provenance"]["heldout_episodes"]
    # The printed report, but for the time.
    def lines(text):
        return [x for x in text.splitlines() if " in " not in x and "wrote" not in x]
    assert len(lines(got["text"])) == len(lines(r.stdout))


@needs_data
def test_ground_fit_within_1e6_of_rlfit_fit(client, tmp_path):
    """20 coefficients spanning six decades (kappa ~1e-3, accelerations ~1e3): the per-episode
    Gauss-Newton matrix held as its eigen-decomposition lost directions here and the fit took
    another path (cost 38870 against 38507); held as a QR factor it does not."""
    folder = os.path.join(DATA, "car_control", "ground_driving_no_handbrake")
    files = [os.path.join(folder, f"episode_0{k}.csv") for k in range(6)
             if os.path.exists(os.path.join(folder, f"episode_0{k}.csv"))]
    cli = tmp_path / "cli.json"
    r = run(RLFIT, "fit", "ground", *files, "--quiet", "--out", str(cli))
    assert r.returncode == 0, r.stderr
    a = json.load(open(cli))
    b = rlfit.dask.fit("ground", files, client=client)["coefficients"]
    for name, value in a["coefficients"].items():
        assert close(value, b["coefficients"][name], COEFF_RELATIVE), name
    assert a["fit_report"]["iterations"] == b["fit_report"]["iterations"]
    assert close(a["fit_report"]["cost_final"], b["fit_report"]["cost_final"], COEFF_RELATIVE)


@needs_data
def test_crossval_equals_rlfit_crossval(client, tmp_path):
    files = aerial_files(6)
    cli, dist = tmp_path / "cli", tmp_path / "dask"
    r = run(RLFIT, "crossval", "aerial", *files, "--folds", "3", "--tail-set", "4", "--quiet",
            "--out", str(cli))
    assert r.returncode == 0, r.stderr
    rlfit.dask.crossval("aerial", files, client=client, folds=3, tail_set=4, out=dist)
    a, b = summary(cli), summary(dist)
    ta = a["coefficients"]["provenance"]["tail"]
    tb = b["coefficients"]["provenance"]["tail"]
    assert ta and len(ta) == len(tb)
    for x, y in zip(ta, tb):
        assert x["new_set_size"] == y["new_set_size"] == 4
        for k, v in x.items():
            if isinstance(v, float):
                assert close(v, y[k], COEFF_RELATIVE), (k, x, y)
    assert sorted(os.listdir(cli)) == sorted(os.listdir(dist))
    assert [e["name"] for e in a["episodes"]] == [e["name"] for e in b["episodes"]]
    fa = a["coefficients"]["provenance"]["fold_coefficients"]
    fb = b["coefficients"]["provenance"]["fold_coefficients"]
    for x, y in zip(fa, fb):
        assert all(close(x[k], y[k], COEFF_RELATIVE) for k in x)
    # Replays with coefficients equal to round-off (measured 1e-14 on the aerial and ball
    # folds): their error figures agree to 1e-12; 1e-6 leaves room for a rollout's sensitivity.
    for x, y in zip(a["errors"], b["errors"]):
        assert {k: v for k, v in x.items() if not isinstance(v, float)} == \
            {k: v for k, v in y.items() if not isinstance(v, float)}
        for k, v in x.items():
            if isinstance(v, float):
                assert close(v, y[k], COEFF_RELATIVE), (x, y)


@needs_data
def test_killed_worker_is_replaced_and_the_fit_unchanged(client, tmp_path):
    files = aerial_files()
    reference = rlfit.dask.fit("aerial", files, client=client)["coefficients"]
    pids = client.run(os.getpid)
    killed = []
    real = rlfit.dask.shard_map(client)

    def killing_map(task, payloads):
        # On the third solver evaluation: run the map, and once a worker holds one of its
        # tasks, SIGKILL that worker's process (its nanny starts a new one; the scheduler
        # reruns the task, and the shard is rebuilt from its files).
        if task != "sums" or killed or len([k for k in calls if k == "sums"]) < 2:
            calls.append(task)
            return real(task, payloads)
        calls.append(task)
        out = {}
        t = threading.Thread(target=lambda: out.setdefault("r", real(task, payloads)))
        t.start()
        deadline = time.time() + 30
        while time.time() < deadline and not killed:
            for worker, keys in client.processing().items():
                if any(str(k).startswith("rlfit-sums-") for k in keys) and worker in pids:
                    os.kill(pids[worker], signal.SIGKILL)
                    killed.append(worker)
                    break
            time.sleep(0.005)
        t.join()
        return out["r"]

    calls = []
    got = rlfit.dask.fit("aerial", files, client=client, _map=killing_map)["coefficients"]
    assert killed, "no worker was killed mid-task"
    assert got["coefficients"] == reference["coefficients"]  # bit for bit
    assert got["std_errors"] == reference["std_errors"]
    client.wait_for_workers(2, timeout=60)


@needs_data
def test_bad_file_fails_as_rlsim_does(client, tmp_path):
    files = aerial_files(3)
    bad = tmp_path / "episode_77.csv"
    with open(files[1]) as f:
        text = f.read()
    bad.write_text(text[: len(text) // 2].rsplit("\n", 1)[0] + "\n" + "1,2,abc\n")
    paths = [files[0], str(bad), files[2]]
    r = run(RLSIM, "replay", "aerial", *paths)
    assert r.returncode == 2
    with pytest.raises(rlfit.InputError) as e:
        rlfit.dask.replay("aerial", paths, client=client, shards=3)
    assert r.stderr.strip() == "rlsim: error: " + str(e.value)
    assert e.value.file == str(bad)
    with pytest.raises(rlfit.InputError) as f:
        rlfit.dask.fit("aerial", paths, client=client)
    assert str(f.value) == str(e.value)


@needs_data
def test_keep_going_as_the_tools(client, tmp_path):
    """With keep_going a bad file and a file of another kind are named with their reasons, as
    the tools name them with --keep-going, and the others are replayed, fitted and
    cross-validated on as by the tools; a run with nothing readable is still an error."""
    files = aerial_files(7)
    bad = tmp_path / "episode_77.csv"
    with open(files[1]) as f:
        text = f.read()
    bad.write_text(text[: len(text) // 2].rsplit("\n", 1)[0] + "\n" + "1,2,abc\n")
    ball = os.path.join(DATA, "ball_trajectories", "episode_000000.csv")
    paths = [files[0], str(bad), ball] + files[2:]
    cli, dist = tmp_path / "cli", tmp_path / "dask"
    r = run(RLSIM, "replay", "aerial", *paths, "--keep-going", "--out", str(cli))
    assert r.returncode == 0, r.stderr
    got = rlfit.dask.replay("aerial", paths, client=client, out=dist, shards=3, keep_going=True)
    assert got["table"] == r.stdout and summary(cli) == summary(dist)
    assert [u["path"] for u in got["summary"]["unreadable"]] == [str(bad), ball]
    unreadable = [x for x in r.stderr.splitlines() if ": unreadable " in x]
    assert len(unreadable) == 2
    assert [x for x in got["warnings"].splitlines() if ": unreadable " in x] == \
        [x.replace("rlsim: ", "rlfit.dask: ") for x in unreadable]

    out = tmp_path / "cli.json"
    r = run(RLFIT, "fit", "aerial", *paths, "--keep-going", "--quiet", "--out", str(out))
    assert r.returncode == 0, r.stderr
    a = json.load(open(out))
    b = rlfit.dask.fit("aerial", paths, client=client, keep_going=True)["coefficients"]
    assert a["provenance"]["unreadable"] == b["provenance"]["unreadable"]
    assert len(b["provenance"]["unreadable"]) == 2
    assert a["provenance"]["train_episodes"] == b["provenance"]["train_episodes"]
    for name, value in a["coefficients"].items():
        assert close(value, b["coefficients"][name], COEFF_RELATIVE), name

    cli, dist = tmp_path / "cli_cv", tmp_path / "dask_cv"
    r = run(RLFIT, "crossval", "aerial", *paths, "--folds", "3", "--keep-going", "--quiet",
            "--out", str(cli))
    assert r.returncode == 0, r.stderr
    got = rlfit.dask.crossval("aerial", paths, client=client, folds=3, out=dist,
                              keep_going=True)
    assert got["summary"]["unreadable"] == json.load(open(cli / "replay_summary.json"))["unreadable"]

    r = run(RLSIM, "replay", "aerial", str(bad), "--keep-going")
    assert r.returncode == 2
    with pytest.raises(rlfit.InputError) as e:
        rlfit.dask.replay("aerial", [str(bad)], client=client, keep_going=True)
    assert r.stderr.strip() == "rlsim: error: " + str(e.value)


@needs_data
def test_command_line(client, tmp_path):
    files = aerial_files(2)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    out = tmp_path / "r"
    r = subprocess.run([sys.executable, "-m", "rlfit.dask", "replay", "aerial", *files,
                        "--scheduler", client.scheduler.address, "--out", str(out)],
                       capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    cli = run(RLSIM, "replay", "aerial", *files)
    assert r.stdout == cli.stdout
    assert (out / "replay_summary.json").exists()
    r = subprocess.run([sys.executable, "-m", "rlfit.dask", "fit", "aerial", "/nonexistent",
                        "--scheduler", "local:1"], capture_output=True, text=True, env=env)
    assert r.returncode == 2
    assert r.stderr.splitlines()[-1] == "rlfit.dask: error: /nonexistent: no such file or folder"
