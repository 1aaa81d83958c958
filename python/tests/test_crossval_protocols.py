"""Tests of scripts/crossval_protocols.py (ctest `python`): the figures of a replay summary
(hand-computed quantiles), the keep rule's verdicts, and a whole comparison with a stand-in
rlfit that writes summaries (its runs reused on a second call, a failing run reported).

Run: python3 -m pytest -q python/tests/test_crossval_protocols.py
"""
import json
import os
import stat
import sys

import pytest

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "scripts"))
import crossval_protocols as cp  # noqa: E402

# Quantiles of a few exact doubles: equal far below this.
TOL = 1e-12


def write_summary(folder, per_horizon):
    """replay_summary.json with open-loop |dx| per-episode medians {horizon: [values]}."""
    os.makedirs(folder, exist_ok=True)
    errors = []
    for h, values in per_horizon.items():
        for i, v in enumerate(values):
            errors.append({"quantity": "dx", "mode": "open_loop", "episode": f"e{i}",
                           "horizon_s": None if h == "last" else h, "median": v})
            # Rows the figures must ignore: windowed, other quantities, aggregates.
            errors.append({"quantity": "dx", "mode": "windowed", "episode": f"e{i}",
                           "horizon_s": None if h == "last" else h, "median": 1e6})
            errors.append({"quantity": "dv", "mode": "open_loop", "episode": f"e{i}",
                           "horizon_s": None if h == "last" else h, "median": 1e6})
        errors.append({"quantity": "dx", "mode": "open_loop", "episode": None,
                       "horizon_s": None if h == "last" else h, "median": 1e6})
    with open(os.path.join(folder, "replay_summary.json"), "w") as f:
        json.dump({"errors": errors}, f)


def test_figures_are_quantiles_of_the_episode_medians(tmp_path):
    vals = [float(v) for v in range(1, 12)]  # 1..11: median 6, p90 at k = 9.0 -> 10
    write_summary(tmp_path, {2.0: vals, 5.0: [2 * v for v in vals], "last": [1.0, 2.0]})
    f = cp.figures(str(tmp_path))
    assert f[(2.0, "median")] == pytest.approx(6.0, abs=TOL)
    assert f[(2.0, "p90")] == pytest.approx(10.0, abs=TOL)
    assert f[(5.0, "median")] == pytest.approx(12.0, abs=TOL)
    assert f[("last", "median")] == pytest.approx(1.5, abs=TOL)
    assert f[("last", "p90")] == pytest.approx(1.9, abs=TOL)  # 1 + 0.9 * (2 - 1)


def test_figures_name_a_missing_horizon(tmp_path):
    write_summary(tmp_path, {2.0: [1.0], 5.0: [1.0]})
    with pytest.raises(ValueError, match="horizon last"):
        cp.figures(str(tmp_path))


def test_episodes_shorter_than_5_s_are_judged_at_1_s(tmp_path):
    # The car sets' episodes (301 rows, 4.9 s) have no 5 s horizon.
    write_summary(tmp_path, {1.0: [1.0, 3.0], 2.0: [2.0, 4.0], "last": [5.0, 7.0]})
    f = cp.figures(str(tmp_path))
    assert list(f) == cp.SHORT_FIGURES
    assert f[(1.0, "median")] == pytest.approx(2.0, abs=TOL)
    assert f[(1.0, "p90")] == pytest.approx(2.8, abs=TOL)
    v = cp.judge([f, f], [f, f])
    assert list(v) == cp.SHORT_FIGURES


def flat(value):
    return {k: value for k in cp.FIGURES}


def test_judge_small_consistent_loss_is_a_loss():
    # Base noisy (sd 0.5), candidate worse by 0.01 in 8 of 9: loss by the sign count.
    base = [flat(5.0 + 0.5 * (i % 3)) for i in range(9)]
    cand = [flat(b[cp.FIGURES[0]] + (0.01 if i < 8 else -0.01)) for i, b in enumerate(base)]
    v = cp.judge(base, cand)
    assert v[cp.FIGURES[0]][4] == "loss"
    assert not cp.keep(v)


def test_judge_mean_beyond_the_base_spread():
    base = [flat(5.0 + 0.1 * (i % 2)) for i in range(9)]  # sd ~0.05
    # Better in 5, worse in 4, but the mean change -0.2 is beyond the base's sd: a win.
    deltas = [-0.5, -0.5, -0.5, -0.5, -0.4, 0.2, 0.2, 0.1, 0.1]
    cand = [flat(b[cp.FIGURES[0]] + d) for b, d in zip(base, deltas)]
    v = cp.judge(base, cand)
    assert v[cp.FIGURES[0]][4] == "win"
    assert v[cp.FIGURES[0]][2:4] == (5, 4)
    assert cp.keep(v)


def test_judge_noise_sized_mixed_change_is_neither():
    base = [flat(5.0 + 0.3 * (i % 3)) for i in range(9)]  # sd ~0.26
    deltas = [0.1, -0.1, 0.1, -0.1, 0.1, -0.1, 0.1, 0.05, -0.05]
    cand = [flat(b[cp.FIGURES[0]] + d) for b, d in zip(base, deltas)]
    v = cp.judge(base, cand)
    assert {x[4] for x in v.values()} == {"neither"}
    assert not cp.keep(v)  # nothing won: not kept


FAKE_RLFIT = """#!{python}
import json, os, sys
args = sys.argv[1:]
out = args[args.index("--out") + 1]
if os.environ.get("FAKE_FAIL"):
    sys.stderr.write("rlfit: error: x.csv:3:2: not a number\\n"); sys.exit(1)
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(" ".join(a for a in args if not a.startswith("/")) + "\\n")
if not os.path.isdir(os.path.dirname(out)):  # as rlfit: the parent must exist
    sys.stderr.write("rlfit: error: %s: parent folder does not exist\\n" % out); sys.exit(2)
folds = int(args[args.index("--folds") + 1])
# The candidate (FAKE_SHIFT) is better by 0.3 uu everywhere; the base moves with the folds.
shift = float(os.environ.get("FAKE_SHIFT", "0"))
errors = []
for h in (2.0, 5.0, None):
    for i in range(10):
        errors.append({{"quantity": "dx", "mode": "open_loop", "episode": "e%d" % i,
                       "horizon_s": h, "median": i + 0.1 * folds + shift}})
os.mkdir(out)
json.dump({{"errors": errors}}, open(os.path.join(out, "replay_summary.json"), "w"))
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    path = tmp_path / "rlfit"
    path.write_text(FAKE_RLFIT.format(python=sys.executable))
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    data = tmp_path / "data" / "ball_trajectories"
    data.mkdir(parents=True)
    for i in range(5):
        (data / f"episode_{i:06d}.csv").write_text("")
    log = tmp_path / "log.txt"
    monkeypatch.setenv("FAKE_LOG", str(log))
    return path, tmp_path / "data", log


def test_whole_comparison_keeps_a_better_candidate_and_reuses_runs(fake, tmp_path, capsys):
    rlfit, data, log = fake
    argv = ["--base", str(rlfit), "--candidate", str(rlfit), "--candidate-env", "FAKE_SHIFT=-0.3",
            "--out", str(tmp_path / "out"), "--protocols", "quick", "--data", str(data)]
    assert cp.main(argv) == 0
    text = capsys.readouterr().out
    assert text.rstrip().endswith("keep")
    runs = log.read_text().splitlines()
    assert len(runs) == 2 * len(cp.QUICK)
    assert sorted(runs) == sorted(
        ["crossval ball --quiet --out --folds %d" % k for k in (3, 4, 5) for _ in range(2)]
        + ["crossval ball --quiet --out --folds 4"] * 2)
    assert (tmp_path / "out" / "shuffled" / "candidate" / "replay_summary.json").exists()
    # A second call reuses every run.
    assert cp.main(argv) == 0
    assert len(log.read_text().splitlines()) == 2 * len(cp.QUICK)


def test_shuffled_order_is_fixed_and_not_sorted(fake):
    _, data, _ = fake
    a = cp.recordings(str(data), "ball_trajectories")
    assert a == cp.recordings(str(data), "ball_trajectories")
    assert sorted(a) != a and len(a) == 5


def test_a_worse_candidate_is_not_kept(fake, tmp_path, capsys):
    rlfit, data, _ = fake
    argv = ["--base", str(rlfit), "--candidate", str(rlfit), "--candidate-env", "FAKE_SHIFT=0.3",
            "--out", str(tmp_path / "out"), "--protocols", "folds3,folds4,folds5", "--data", str(data)]
    assert cp.main(argv) == 1
    assert capsys.readouterr().out.rstrip().endswith("not kept")


def test_a_failing_run_is_reported(fake, tmp_path, capsys, monkeypatch):
    rlfit, data, _ = fake
    monkeypatch.setenv("FAKE_FAIL", "1")
    argv = ["--base", str(rlfit), "--candidate", str(rlfit), "--out", str(tmp_path / "out"),
            "--protocols", "folds3,folds4", "--data", str(data)]
    assert cp.main(argv) == 2
    err = capsys.readouterr().err
    assert "x.csv:3:2: not a number" in err and err.count("\n") == 1


def test_extra_args_go_to_their_arm_only(fake, tmp_path, capsys):
    rlfit, data, log = fake
    argv = ["--base", str(rlfit), "--candidate", str(rlfit), "--out", str(tmp_path / "out"),
            "--protocols", "folds3,folds4", "--data", str(data),
            "--candidate-args=--hold recovery", "--candidate-args", "--threads 1",
            "--base-args=--hold drag"]
    cp.main(argv)
    runs = sorted(log.read_text().splitlines())
    assert runs == sorted(["crossval ball --quiet --out --folds %d --hold drag" % k for k in (3, 4)]
                          + ["crossval ball --quiet --out --folds %d --hold recovery --threads 1" % k
                             for k in (3, 4)])


def test_extra_args_a_protocol_sets_are_refused(fake, tmp_path, capsys):
    rlfit, data, log = fake
    argv = ["--base", str(rlfit), "--candidate", str(rlfit), "--out", str(tmp_path / "out"),
            "--protocols", "folds4,init", "--data", str(data),
            "--candidate-args=--hold recovery --init /tmp/x.json"]
    assert cp.main(argv) == 2
    err = capsys.readouterr().err
    assert "protocol init sets --init itself: not in --candidate-args" in err
    assert not log.exists()  # refused before any run


def test_a_car_model_needs_its_folder_for_the_shuffled_protocol(fake, tmp_path, capsys):
    rlfit, data, log = fake
    argv = ["--base", str(rlfit), "--candidate", str(rlfit), "--out", str(tmp_path / "out"),
            "--model", "wall", "--protocols", "folds4,shuffled", "--data", str(data)]
    assert cp.main(argv) == 2
    assert "--folder for a model other than the ball" in capsys.readouterr().err
    # With it, the shuffled runs name that folder's recordings; init reads the model's results.
    argv += ["--folder", "ball_trajectories", "--protocols", "shuffled,init"]
    cp.main(argv)
    runs = log.read_text().splitlines()
    assert "crossval wall --quiet --out --folds 4 --init results/wall/coeffs.json" in runs
    shuffled = [r for r in runs if "--init" not in r and r.startswith("crossval wall")]
    assert shuffled and all(r == "crossval wall --quiet --out --folds 4" for r in shuffled)
