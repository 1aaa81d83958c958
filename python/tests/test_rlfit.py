"""Tests of the Python module rlfit (ctest `python`): shapes, the checks and errors of the
tools, batch = single, threads do not change results, and the module against the CLI (rlsim
predict's 17-digit output bit for bit; rlsim replay's trajectory CSV digit for digit).

Run: PYTHONPATH=build/python RLFIT_BUILD_DIR=build python3 -m pytest -q python/tests
"""
import csv
import ctypes
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import rlfit

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("RLFIT_BUILD_DIR", os.path.join(SRC, "build"))
RLSIM = os.path.join(BUILD, "rlsim")
SYNTH_BALL = os.path.join(SRC, "datasets", "synthetic", "ball", "episode_900001.csv")
SYNTH_AERIAL = os.path.join(SRC, "datasets", "synthetic", "aerial", "episode_9000.csv")

HAVE_DATA = rlfit.data_root() != ""
needs_data = pytest.mark.skipif(not HAVE_DATA, reason="no datasets root (the arena mesh)")


def rlsim(*args, cwd=None):
    return subprocess.run([RLSIM, *args], capture_output=True, text=True, cwd=cwd)


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


# --- coefficients ----------------------------------------------------------------------------

def test_committed_coefficients_are_the_default_and_differ_from_seed():
    c = rlfit.load_coefficients("aerial")
    with open(os.path.join(SRC, "results", "aerial", "coeffs.json")) as f:
        shipped = json.load(f)["coefficients"]
    assert c["values"].dtype == np.float64 and c["values"].shape == (len(c["names"]),)
    assert [c["values"][i] for i in range(len(c["names"]))] == \
        [shipped[n] for n in c["names"]]
    seed = rlfit.load_coefficients("aerial", "seed")
    assert seed["names"] == c["names"]
    assert not np.array_equal(seed["values"], c["values"])
    assert "committed fit" in c["source"] and seed["std_errors"] is None


def test_model_values_override_changes_the_prediction():
    m = rlfit.Model("aerial")
    state = [0, 0, 1000, 0, 0, 0, 1, 0, 0]
    base = m.predict(state, 0.5)
    seed = rlfit.Model("aerial", coeffs="seed").predict(state, 0.5)
    assert not np.array_equal(base, seed)
    same = rlfit.Model("aerial", values=m.coefficients["values"]).predict(state, 0.5)
    assert np.array_equal(base, same)
    values, names = m.coefficients["values"].copy(), m.coefficients["names"]
    values[names.index("D_r")] *= 2  # roll damping acts on the roll rate of the state
    assert not np.array_equal(base, rlfit.Model("aerial", values=values).predict(state, 0.5))
    with pytest.raises(rlfit.InputError, match="expected"):
        rlfit.Model("aerial", values=[1.0, 2.0])
    values[names.index("D_r")] = np.nan
    with pytest.raises(rlfit.InputError, match="D_r"):
        rlfit.Model("aerial", values=values)


# --- predictions ---------------------------------------------------------------------------

@needs_data
def test_ball_predict_shape_columns_and_first_row():
    m = rlfit.Model("ball")
    state = np.array([100.0, -200.0, 800.0, 300.0, 50.0, 400.0, 1.0, 2.0, 3.0])
    t = m.predict(state, 6.0)
    assert m.columns == ["t_s", "x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz"]
    assert t.dtype == np.float64 and t.shape == (366, 10)  # floor(6 * 60.96) + 1 rows
    assert np.array_equal(t[0, 1:], state)
    assert np.array_equal(t[:, 0], np.arange(366) * (1 / 60.96))
    # Free flight over the first row: gravity and drag only (no contact 800 uu up), so the
    # height rises by less than vz * dt and vz drops by about g * dt.
    dt = 1 / 61.0  # the row's game time (120/61 ticks of 1/120 s, src/models/ball.h)
    assert t[1, 3] < 800 + 400 * dt and t[1, 6] < 400 - 600 * dt


@needs_data
def test_batch_equals_single_and_threads_do_not_change_results():
    m = rlfit.Model("ball")
    rng = np.random.default_rng(7)
    states = np.column_stack([rng.uniform(-3000, 3000, 20), rng.uniform(-4000, 4000, 20),
                              rng.uniform(100, 1800, 20), rng.uniform(-1500, 1500, (20, 3))])
    batch = m.predict_batch(states, 2.0)
    assert batch.shape == (20, 122, 10)
    for i in range(20):
        assert np.array_equal(batch[i], m.predict(states[i], 2.0))
    assert np.array_equal(batch, m.predict_batch(states, 2.0, threads=1))
    assert np.array_equal(batch, m.predict_batch(states, 2.0, threads=3))


def test_car_step_is_the_first_row_of_a_rollout():
    a = rlfit.Model("aerial")
    state = [0, 0, 1000, 0, 500, 300, 0.5, -1, 2, 0.1, 1.5708, -0.2]
    controls = [0, 0, 1, -0.5, 0.25, 0, 0, 1, 0]  # t_s, throttle..handbrake
    r = a.rollout(state, [controls], 1.0)
    assert a.columns[-3:] == ["pitch", "yaw", "roll"] and r.shape == (121, 13)
    assert np.array_equal(a.step(state, controls[1:]), r[1, 1:])
    # Boosting accelerates along the nose, no input does not: the inputs reach the model.
    coast = a.rollout(state, [[0] * 9], 1.0)
    assert np.linalg.norm(r[-1, 4:7]) > np.linalg.norm(coast[-1, 4:7]) + 100
    g = rlfit.Model("ground")
    on_ground = [0, 0, 17.01, 500, 0, 0, 0, 0, 0, 0, 0, 0]
    row = g.step(on_ground, [1, 0, 0, 0, 0, 0, 0, 0])
    assert row.shape == (12,) and row[3] > 500 and row[2] == pytest.approx(17.01, abs=0.1)


def test_predict_equals_rlsim_predict_bit_for_bit(tmp_path):
    """The module and `rlsim predict` (17 significant digits: exact) give the same doubles."""
    a = rlfit.Model("aerial")
    state = [10.5, -20.25, 900, 300, -100, 250, 1.5, -2, 0.5, 0.3, -1.2, 0.7]
    controls = np.array([[0, 1, 0, 1, 0, 0, 0, 1, 0], [0.25, 0, 0.5, -1, 1, 0.5, 0, 0, 0],
                         [0.6, 0.5, 0, 0, 0, -1, 0, 1, 0]])
    with open(tmp_path / "controls.csv", "w") as f:
        f.write(",".join(["t_s", "throttle", "steer", "pitch", "yaw", "roll", "jump", "boost",
                          "handbrake"]) + "\n")
        for row in controls:
            f.write(",".join(repr(float(v)) for v in row) + "\n")
    p = rlsim("predict", "aerial", "--state", ",".join(repr(float(v)) for v in state[:9]),
              "--orientation", ",".join(repr(float(v)) for v in state[9:]), "--controls",
              str(tmp_path / "controls.csv"), "--duration", "1.5", "--out",
              str(tmp_path / "car.csv"))
    assert p.returncode == 0, p.stderr
    cli = np.array([[float(r[c]) for c in a.columns] for r in read_csv(tmp_path / "car.csv")])
    mine = a.rollout(state, controls, 1.5) + 0.0  # the CSV prints -0 as 0
    assert cli.shape == mine.shape
    assert np.array_equal(cli, mine)


@needs_data
def test_ball_predict_equals_rlsim_predict_bit_for_bit(tmp_path):
    m = rlfit.Model("ball")
    state = [-2549.054443, -2943.251953, 1791.555542, -377.75351, -1357.385864, -821.016052,
             -2.8414, -3.4073, 4.0394]
    p = rlsim("predict", "ball", "--state", ",".join(repr(v) for v in state), "--duration", "6",
              "--out", str(tmp_path / "ball.csv"))
    assert p.returncode == 0, p.stderr
    cli = np.array([[float(r[c]) for c in m.columns] for r in read_csv(tmp_path / "ball.csv")])
    assert np.array_equal(cli, m.predict(state, 6.0) + 0.0)


# --- recordings and replay -----------------------------------------------------------------

def test_read_recording_arrays():
    eps = rlfit.read_recording(SYNTH_AERIAL)
    assert len(eps) == 1
    ep = eps[0]
    n = len(ep["t_s"])
    assert ep["kind"] == "car" and n == 181
    for key, shape in [("x", (n, 3)), ("v", (n, 3)), ("omega", (n, 3)), ("theta", (n, 3, 3)),
                       ("states", (n, 12)), ("controls", (n, 9)), ("step_dt_s", (n - 1,))]:
        assert ep[key].shape == shape and ep[key].dtype == np.float64, key
    with open(SYNTH_AERIAL) as f:
        first = [float(v) for v in f.readline().split(",")]
    # 25 columns: x, y, z, vx, vy, vz, ... (the reader's layout); the position is as written.
    assert np.array_equal(ep["x"][0], first[0:3])
    assert np.array_equal(ep["states"][:, :3], ep["x"])


def test_bad_recording_is_an_input_error_with_the_tools_message(tmp_path):
    # A car episode and the aerial model, which needs no datasets root (the floor stands in for
    # the mesh): `rlsim replay ball` asks for the arena mesh before it reads a recording, so
    # without a root its message was about the missing mesh and this test failed.
    lines = open(SYNTH_AERIAL).read().splitlines()
    cells = lines[4].split(",")
    cells[2] = " abc"
    lines[4] = ",".join(cells)
    bad = tmp_path / "episode_9000.csv"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(rlfit.InputError) as e:
        rlfit.read_recording(str(bad))
    assert (e.value.file, e.value.row, e.value.column) == (str(bad), 5, 3)
    p = rlsim("replay", "aerial", str(bad))
    assert p.returncode == 2
    assert str(e.value) in p.stderr  # the same line the CLI prints
    with pytest.raises(rlfit.InputError, match="no such file"):
        rlfit.read_recording(str(tmp_path / "missing.csv"))


def test_keep_going_names_every_bad_file_and_reads_the_rest(tmp_path):
    """keep_going=True is the tools' --keep-going: each file that cannot be read is named with
    its reason (a UserWarning from read_recording, summary['unreadable'] from replay) and the
    others are used; without it the first bad file raises, as before."""
    good = open(SYNTH_AERIAL).read()
    (tmp_path / "a.csv").write_text(good)
    lines = good.splitlines()
    lines[2] = "abc," + lines[2].split(",", 1)[1]
    (tmp_path / "b.csv").write_text("\n".join(lines) + "\n")
    (tmp_path / "c.csv").write_text(good[: len(good) // 2].rstrip("\n"))  # cut short
    with pytest.raises(rlfit.InputError, match="b.csv: row 3, column 1"):
        rlfit.read_recording(str(tmp_path))
    with pytest.warns(UserWarning) as caught:
        eps = rlfit.read_recording(str(tmp_path), keep_going=True)
    assert [os.path.basename(e["path"]) for e in eps] == ["a.csv"]
    messages = [str(w.message) for w in caught]
    assert any("b.csv: row 3, column 1" in m for m in messages), messages
    assert any("c.csv" in m and "truncated" in m for m in messages), messages
    r = rlfit.replay("aerial", [str(tmp_path)], keep_going=True)
    bad = {os.path.basename(u["path"]): u["reason"] for u in r["summary"]["unreadable"]}
    assert sorted(bad) == ["b.csv", "c.csv"] and bad["b.csv"].startswith("row 3, column 1")
    assert len(r["episodes"]) == 1 and "unreadable" in r["table"]


def test_paths_take_str_bytes_pathlike_and_names_that_are_not_utf8(tmp_path):
    """A path argument is what os.fsencode takes: str (a name that is not UTF-8 as os.fsdecode
    gives it, with surrogate escapes), bytes or os.PathLike; paths come back as os.fsdecode
    gives them, so they open again. Before, such a str or a pathlib.Path raised pybind11's
    "incompatible function arguments" TypeError."""
    import pathlib
    raw = os.path.join(os.fsencode(str(tmp_path)), b"episode_\xff9000.csv")
    with open(SYNTH_AERIAL, "rb") as f, open(raw, "wb") as out:
        out.write(f.read())
    as_str = os.fsdecode(raw)
    want = rlfit.read_recording(SYNTH_AERIAL)[0]["x"]
    for path in (as_str, raw, pathlib.Path(as_str)):
        eps = rlfit.read_recording(path)
        assert len(eps) == 1 and np.array_equal(eps[0]["x"], want)
        assert eps[0]["path"] == as_str and os.path.exists(eps[0]["path"])
    assert rlfit.replay("aerial", [raw, pathlib.Path(SYNTH_AERIAL)])["summary"]["model"] == "aerial"
    # A bad file under such a name: InputError, its file the name that opens, its message text.
    with open(raw, "w") as out:
        out.write("1,2,abc\n")
    with pytest.raises(rlfit.InputError) as e:
        rlfit.read_recording(pathlib.Path(as_str))
    assert e.value.file == as_str and "\\xff" in str(e.value)
    # Not a path at all: a TypeError naming what a path may be.
    with pytest.raises(TypeError, match="os.PathLike"):
        rlfit.read_recording(42)
    with pytest.raises(ValueError, match="null byte"):
        rlfit.read_recording(b"a\0b")


@needs_data
def test_replay_equals_rlsim_replay_and_predict_from_the_recording(tmp_path):
    """rlsim replay's trajectory CSV (shortest round-trip digits) reads back to the module's
    replay bit for bit, cell for cell; the module's predict from the recorded first state is
    the replay's row 0 and within a tick's travel of it for a second (another tick phase); and
    it equals rlsim predict's 17-digit output bit for bit."""
    r = rlfit.replay("ball", [SYNTH_BALL])
    assert len(r["episodes"]) == 1
    ep = r["episodes"][0]
    p = rlsim("replay", "ball", SYNTH_BALL, "--out", str(tmp_path / "out"), "--quiet")
    assert p.returncode == 0, p.stderr
    assert p.stdout == r["table"]
    rows = read_csv(tmp_path / "out" / ep["name"])
    with open(tmp_path / "out" / "replay_summary.json") as f:
        summary = json.load(f)
    assert summary["errors"] == r["summary"]["errors"]
    assert summary["curve"] == r["summary"]["curve"]
    names = ["x", "y", "z", "vx", "vy", "vz", "wx", "wy", "wz"]
    by_source = {int(s): k for k, s in enumerate(ep["source_row"])}
    compared = 0
    for row in rows:
        k = by_source.get(int(row["source_row"]))
        if k is None:  # a merged repeat: the row before it
            k = max(i for s, i in by_source.items() if s < int(row["source_row"]))
        for c, name in enumerate(names):
            v = ep["predicted"][k, c]
            if math.isnan(v):
                assert row[name] == "", (row["source_row"], name)
            else:
                assert float(row[name]) == v, (row["source_row"], name)
            compared += not math.isnan(v)
    assert compared > 9 * 100

    # The whole episode is covered, evenly spaced. Replay's open loop starts row 0 between two
    # ticks at the episode's clock phase (BallClockOrigin, src/models/ball.h); predict takes its
    # state as a tick. So they agree at row 0 and, over this episode's first second of free
    # flight, to the ticks' discretisation of the parabola, below g dt^2 = 0.045 uu (measured
    # 0.0057 uu).
    assert ep["covered"].all() and np.all(np.round(ep["step_dt_s"] * 60.96) == 1)
    m = rlfit.Model("ball")
    duration = (len(ep["t_s"]) - 1) / 60.96
    mine = m.predict(ep["states"][0], duration)
    assert mine.shape[0] == len(ep["t_s"])
    assert np.array_equal(mine[0, 1:], ep["predicted"][0])
    first_second = slice(0, 61)
    dx = np.abs(mine[first_second, 1:4] - ep["predicted"][first_second, 0:3]).max()
    assert 0 < dx < 650.0 / 120.0**2
    p = rlsim("predict", "ball", "--state", ",".join(repr(float(v)) for v in ep["states"][0]),
              "--duration", repr(duration), "--out", str(tmp_path / "p.csv"))
    assert p.returncode == 0, p.stderr
    cli = np.array([[float(row[c]) for c in names] for row in read_csv(tmp_path / "p.csv")])
    assert np.array_equal(cli, mine[:, 1:] + 0.0)


@needs_data
def test_replay_summary_has_per_horizon_errors():
    r = rlfit.replay("aerial", ["car_control/aerial/episode_00.csv"], horizons_s=[0.5, 1.0])
    s = r["summary"]
    assert s["model"] == "aerial" and s["horizons_s"] == [0.5, 1.0]
    agg = [e for e in s["errors"] if e["episode"] is None and e["mode"] == "open_loop"
           and e["quantity"] == "dx" and e["horizon_s"] == 1.0 and e["split"] == "all"]
    assert len(agg) == 1 and agg[0]["n"] == 1 and 0 < agg[0]["median"] < 50


@needs_data
def test_replay_row_script_reproduces_the_table_row():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.run([sys.executable, os.path.join(SRC, "scripts", "replay_row.py"), "aerial",
                        "--split", "heldout", "--quantity", "dx", "--horizon", "2"],
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stdout + p.stderr
    line = p.stdout.splitlines()[1]
    table = rlfit.replay("aerial")["table"]
    heldout = table[table.index("== held-out"):]
    assert line in heldout.splitlines()
    assert p.stdout.splitlines()[-1] == "match"


# --- the wall, jump and car models --------------------------------------------------------

REST = [0, 0, 17.01, 0, 0, 0, 0, 0, 0, 0, 0, 0]  # a car at rest on the floor, upright
JUMP_HELD = [[0, 0, 0, 0, 0, 0, 1, 0, 0]]        # t_s, throttle..handbrake: jump from t = 0
NOTHING = [[0, 0, 0, 0, 0, 0, 0, 0, 0]]


def test_jump_predict_starts_on_the_ground_and_takes_off():
    """A car resting on the floor starts with its wheels on it: pressing jump takes off (held:
    apex ~230 uu, NOTES "Jumps"); without the press it stays at rest. Same as rlsim predict."""
    m = rlfit.Model("jump")
    assert m.columns[-3:] == ["pitch", "yaw", "roll"]
    up = m.rollout(REST, JUMP_HELD, 0.6)
    assert 200 < up[:, 3].max() < 260
    assert up[:10, 6].max() > 250  # the impulse after the input delay (vz, uu/s)
    stay = m.rollout(REST, NOTHING, 0.6)
    assert np.all(stay[:, 3] == 17.01)
    # In the air (z 300) a press is a double jump, not a take-off: one impulse, then falling.
    air = m.rollout([0, 0, 300, 0, 0, 0, 0, 0, 0, 0, 0, 0], JUMP_HELD, 0.6)
    assert air[:10, 6].max() > 250 and air[-1, 6] < air[:10, 6].max() - 300


def test_jump_predict_equals_rlsim_predict(tmp_path):
    with open(tmp_path / "controls.csv", "w") as f:
        f.write("t_s,jump,throttle\n0,1,1\n0.3,0,1\n")
    p = rlsim("predict", "jump", "--state", "0,0,17.01,0,0,0", "--controls",
              str(tmp_path / "controls.csv"), "--duration", "1", "--out", str(tmp_path / "j.csv"))
    assert p.returncode == 0, p.stderr
    m = rlfit.Model("jump")
    cli = np.array([[float(r[c]) for c in m.columns] for r in read_csv(tmp_path / "j.csv")])
    mine = m.rollout(REST, [[0, 1, 0, 0, 0, 0, 1, 0, 0], [0.3, 1, 0, 0, 0, 0, 0, 0, 0]], 1.0)
    assert np.array_equal(cli, mine + 0.0)
    assert cli[:, 3].max() > 150  # it jumped


@needs_data
def test_car_predict_jumps_flies_and_lands():
    """The car model on the arena: a held jump from the floor takes off, flies and lands back on
    the floor at the rest height; the wall model drives on the floor."""
    car = rlfit.Model("car")
    t = car.rollout(REST, JUMP_HELD[:1] + [[0.3, 0, 0, 0, 0, 0, 0, 0, 0]], 2.0)
    assert 200 < t[:, 3].max() < 260
    assert t[-1, 3] == pytest.approx(17.01, abs=1e-9)  # landed: the ground step's height
    assert t[:, 3].argmax() < len(t) - 1
    wall = rlfit.Model("wall")
    drive = wall.rollout(REST, [[0, 1, 0, 0, 0, 0, 0, 0, 0]], 1.0)
    assert drive[-1, 4] > 500 and drive[-1, 3] == pytest.approx(17.01, abs=1e-6)


@needs_data
def test_replay_wall_jump_and_car():
    """replay with the wall, jump and car models: covered rows, labels, errors and the car's
    on_ground check (NOTES: agreement above 99% of rows)."""
    w = rlfit.replay("wall", ["car_control/wall_driving/episode_00.csv"])
    assert w["episodes"][0]["covered"].sum() > 250
    assert w["episodes"][0]["predicted"].shape[1] == 12
    j = rlfit.replay("jump", ["car_control/jumps.txt"])
    ep = j["episodes"][0]
    assert 0 < ep["covered"].sum() < len(ep["covered"])
    assert set(ep["regime"]) >= {"covered", "on the ground"}
    c = rlfit.replay("car", ["car_control/freestyling.txt"])
    covered = sum(e["covered"].sum() for e in c["episodes"])
    rows = sum(len(e["covered"]) for e in c["episodes"])
    assert covered / rows > 0.9
    assert not any("jumping" in e["regime"] for e in c["episodes"])  # the jump step covers them
    checks = c["summary"]["checks"]
    name = "on_ground vs switch, recorded states"
    assert checks[name + ".agree"] / checks[name + ".rows"] > 0.99
    errs = [e for e in c["summary"]["errors"] if e["episode"] is None and e["mode"] == "windowed"
            and e["quantity"] == "dx" and e["horizon_s"] == 0.5 and e["split"] == "all"]
    assert len(errs) == 1 and errs[0]["median"] < 5


# --- arena -----------------------------------------------------------------------------------

@needs_data
def test_arena_floor_contact_and_batch():
    arena = rlfit.Arena()
    assert arena.triangle_count == 8028
    c = arena.collide([100.0, 200.0, 50.0], 91.25)
    # The floor is z = 0 there: depth = r - 50, normal up (hand computed).
    assert c["hit"] and c["depth"] == pytest.approx(41.25, abs=1e-9)
    assert np.allclose(c["normal"], [0, 0, 1], atol=1e-9)
    assert np.allclose(c["point"], [100, 200, 0], atol=1e-9) and c["triangles"] >= 1
    miss = arena.collide([0.0, 0.0, 1000.0], 91.25)
    assert not miss["hit"] and np.isnan(miss["point"]).all()
    rng = np.random.default_rng(3)
    centers = np.column_stack([rng.uniform(-4000, 4000, 500), rng.uniform(-5000, 5000, 500),
                               rng.uniform(0, 2000, 500)])
    b = arena.collide_batch(centers, 91.25)
    assert b["normal"].shape == (500, 3) and b["hit"].dtype == np.bool_
    assert 0 < b["hit"].sum() < 500
    for i in range(0, 500, 7):
        one = arena.collide(centers[i], 91.25)
        assert one["hit"] == b["hit"][i] and one["depth"] == b["depth"][i]
        assert np.array_equal(one["normal"], b["normal"][i])
        assert np.array_equal(one["point"], b["point"][i], equal_nan=True)
    radii = np.full(500, 91.25)
    assert np.array_equal(arena.collide_batch(centers, radii, threads=1)["depth"], b["depth"])
    # A query with no answer is refused, not reported as a miss.
    with pytest.raises(rlfit.InputError, match="not finite"):
        arena.collide([np.nan, 0.0, 100.0], 91.25)
    with pytest.raises(rlfit.InputError, match=r"in \[0, 1e6\]"):
        arena.collide([0.0, 0.0, 100.0], -1.0)
    with pytest.raises(rlfit.InputError, match="got 1e\\+50"):
        arena.collide([0.0, 0.0, 100.0], 1e50)  # was a quiet miss: the culls overflow
    bad = centers.copy()
    bad[4, 2] = np.inf
    with pytest.raises(rlfit.InputError) as e:
        arena.collide_batch(bad, 91.25)
    assert (e.value.file, e.value.row, e.value.column) == ("centers", 5, 3)


# --- errors ----------------------------------------------------------------------------------

def test_bad_arguments_are_input_errors_naming_row_and_column():
    a = rlfit.Model("aerial")
    states = np.zeros((4, 6))
    states[:, 2] = 500
    states[2, 4] = 1e6  # row 3: speed
    with pytest.raises(rlfit.InputError) as e:
        a.predict_batch(states, 1.0)
    assert (e.value.file, e.value.row, e.value.column) == ("states", 3, 4)
    assert "speed" in str(e.value)
    states[2, 4] = np.nan
    with pytest.raises(rlfit.InputError, match="not finite"):
        a.predict_batch(states, 1.0)
    with pytest.raises(rlfit.InputError, match="duration_s"):
        a.predict([0, 0, 500, 0, 0, 0], -1.0)
    with pytest.raises(rlfit.InputError, match="dt_s"):
        a.predict([0, 0, 500, 0, 0, 0], 1.0, dt_s=0.003)
    with pytest.raises(rlfit.InputError, match="values per row"):
        a.predict([0, 0, 500, 0, 0], 1.0)
    with pytest.raises(rlfit.InputError) as e:
        a.rollout([0, 0, 500, 0, 0, 0], [[0, 0, 0, 0, 0, 0, 0, 0, 0], [0, 1, 0, 0, 0, 0, 0, 2, 0]],
                  1.0)
    assert (e.value.row, e.value.column) == (2, 8) and "boost 2 must be 0 or 1" in str(e.value)
    with pytest.raises(rlfit.InputError, match="does not increase"):
        a.rollout([0, 0, 500, 0, 0, 0], [[0.5] + [0] * 8, [0.5] + [0] * 8], 1.0)
    with pytest.raises(rlfit.InputError, match="unknown model"):
        rlfit.Model("plane")
    with pytest.raises(rlfit.InputError, match="no such file"):
        rlfit.load_coefficients("ball", "/nonexistent/coeffs.json")
    with pytest.raises(ValueError):  # InputError is a ValueError
        rlfit.Model("aerial").predict([0, 0, 500, 0, 0, 0], 700.0)
    with pytest.raises(rlfit.InputError, match="split the batch"):  # rlsim predict's bound
        a.predict_batch(np.zeros((50000, 6)), 1.0)
    # Several states to predict (not predict_batch): refused, not written past the output.
    with pytest.raises(rlfit.InputError, match="1-D array"):
        a.predict(np.full((2, 6), 500.0), 1.0)
    with pytest.raises(rlfit.InputError, match="1-D array"):
        a.step(np.full((3, 6), 500.0))
    # A horizon far past any recording: refused instead of a curve of 1e10 points.
    with pytest.raises(rlfit.InputError, match="horizons"):
        rlfit.replay("aerial", [SYNTH_AERIAL], horizons_s=[1e9])


@needs_data
def test_ball_takes_no_controls_and_no_orientation():
    m = rlfit.Model("ball")
    with pytest.raises(rlfit.InputError, match="no controls"):
        m.predict([0, 0, 500, 0, 0, 0], 1.0, controls=[[0] * 9])
    with pytest.raises(rlfit.InputError, match="values per row"):
        m.predict([0, 0, 500, 0, 0, 0, 0, 0, 0, 0, 0, 0], 1.0)


def _runs_python_during(fn):
    """Whether another Python thread runs while fn runs in a thread: True when fn releases the
    GIL. Deterministic, no clock: with a switch interval of 1000 s the thread running fn never
    gives up the GIL by force, so the waiting main thread gets it during fn only if fn releases
    it."""
    import threading
    state = {"done": False}
    started = threading.Event()

    def work():
        started.set()  # wakes the main thread, which then waits for the GIL
        fn()
        state["done"] = True

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        t = threading.Thread(target=work)
        t.start()
        started.wait()
        during = not state["done"]
        t.join()
    finally:
        sys.setswitchinterval(interval)
    return during


@needs_data
def test_batch_releases_the_gil():
    m = rlfit.Model("ball")
    states = np.tile([0.0, 0.0, 500.0, 800.0, 600.0, 900.0, 0.0, 0.0, 0.0], (1000, 1))
    # The control: a C call through ctypes.PyDLL keeps the GIL.
    libc = ctypes.PyDLL(None)
    assert not _runs_python_during(lambda: libc.usleep(200000))
    # predict_batch and collide_batch let Python run.
    assert _runs_python_during(lambda: m.predict_batch(states, 6.0, threads=1))
    centers = np.tile([0.0, 0.0, 60.0], (600000, 1))
    assert _runs_python_during(lambda: rlfit.Arena().collide_batch(centers, 91.25, threads=1))


@needs_data
def test_readme_example_runs():
    """The README's Python example (its indented block in the Python section), as written."""
    text = open(os.path.join(SRC, "README.md")).read()
    section = text[text.index("## Python\n"):]
    section = section[:section.index("\n## ", 1)]
    code = "\n".join(line[4:] for line in section.splitlines() if line.startswith("    "))
    assert "rlfit.Ball(" in code and "car.step(" in code
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), MPLBACKEND="Agg")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr


def test_missing_data_root_names_the_python_argument(tmp_path):
    """Without any datasets root the ball's error says how to pass one from Python (data_root=),
    not only the tools' --data option."""
    env = {k: v for k, v in os.environ.items() if k not in ("RLFIT_DATA", "XDG_DATA_HOME")}
    env.update(HOME=str(tmp_path), PYTHONPATH=os.pathsep.join(sys.path))
    code = ("import rlfit, sys\n"
            "if rlfit.data_root():\n"
            "    sys.exit(77)\n"
            "try:\n"
            "    rlfit.Model('ball')\n"
            "except rlfit.InputError as e:\n"
            "    print(e)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                       cwd=tmp_path)
    if p.returncode == 77:
        pytest.skip("a datasets root is found even from an empty folder (the checkout's data/lobot)")
    assert p.returncode == 0, p.stderr
    assert "no datasets root found" in p.stdout
    assert "or pass data_root=DIR" in p.stdout and "--data" not in p.stdout


@needs_data
def test_ball_step_ticks_is_the_replays_tick_and_bounces_at_c_r():
    # A ball falling onto the floor at 1000 uu/s: free ticks first (drag, then gravity's change,
    # rounded to 0.01 uu/s, as StepBall), then one bounce at C_R times the normal speed before the tick (NOTES, tail28),
    # and a chain restarted from any tick state repeats the same ticks bit for bit.
    m = rlfit.Model("ball")
    c = dict(zip(m.coefficients["names"], m.coefficients["values"]))
    tick = 1.0 / 120.0
    s = np.array([0.0, 0.0, 200.0, 0.0, 0.0, -1000.0, 0.0, 0.0, 0.0])
    t = m.step_ticks(s, 30)
    assert t.shape == (31, 9)
    assert np.array_equal(t[0], s)
    # The game rounds the velocity to 0.01 uu/s every tick (NOTES, issue 12, vel35).
    vz1 = round((-1000.0 * math.exp(c["drag"] * tick) - 650.0 * tick) * 100.0) / 100.0
    assert t[1, 5] == pytest.approx(vz1, abs=1e-9)
    assert t[1, 2] == pytest.approx(200.0 + vz1 * tick, abs=1e-9)
    k = int(np.argmax(t[:, 5] > 0.0))  # the first tick moving up
    assert k > 1
    assert t[k, 5] == pytest.approx(-c["restitution"] * t[k - 1, 5], rel=1e-9)
    assert np.array_equal(m.step_ticks(t[10], 20), t[10:])
    with pytest.raises(rlfit.InputError):
        m.step_ticks(s[:6], 1)
    with pytest.raises(rlfit.InputError):
        m.step_ticks(s, -1)
    with pytest.raises(rlfit.InputError):
        rlfit.Model("aerial").step_ticks(s, 1)


@needs_data
def test_ball_state_outside_the_arena_is_refused():
    # Under the floor or above the ceiling (outside the box of the arena mesh's vertices) no
    # surface holds the ball: a replay leaves such rows out, and predict, step and step_ticks
    # refuse such a state (they used to let it fall for ever), naming the coordinate.
    m = rlfit.Model("ball")
    under = np.array([0.0, 0.0, -500.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    above = np.array([0.0, 0.0, 3000.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    for call in (lambda s: m.predict(s, 1.0), lambda s: m.step(s), lambda s: m.step_ticks(s, 5)):
        for s in (under, above):
            with pytest.raises(rlfit.InputError, match="outside the arena mesh"):
                call(s)
    with pytest.raises(rlfit.InputError, match=r"states: row 2, column 1: position z = 3000"):
        m.predict_batch(np.stack([under * 0 + [0, 0, 500, 0, 0, 0, 0, 0, 0], above]), 1.0)
    assert m.predict(np.array([0.0, 0.0, 500.0, 0.0, 0.0, 0.0]), 1.0).shape[0] == 61


@needs_data
def test_ball_contact_reports_the_normal_the_step_bounces_off():
    m = rlfit.Model("ball")
    floor = m.ball_contact(np.array([100.0, 200.0, 90.0]))
    assert floor["hit"]
    assert floor["depth"] == pytest.approx(floor["radius"] - 90.0, abs=1e-9)
    assert np.allclose(floor["normal"], [0.0, 0.0, 1.0])
    assert floor["contacts"] and all(-1 <= n < 8028 for e in floor["contacts"] for n in e["neighbours"])
    # A ball in the floor-to-side-wall curve touches several facets: the step's normal is the
    # average of the contacts' adjusted normals (ManifoldContactNormal).
    curve = m.ball_contact(np.array([4096.0 - 60.0, 0.0, 60.0]))
    assert curve["hit"] and len(curve["contacts"]) >= 2
    mean = sum(e["adjusted"] for e in curve["contacts"])
    assert np.allclose(curve["normal"], mean / np.linalg.norm(mean), atol=1e-12)
    assert not m.ball_contact(np.array([0.0, 0.0, 1000.0]))["hit"]
    with pytest.raises(rlfit.InputError):
        m.ball_contact(np.array([0.0, float("nan"), 90.0]))


# A still car with no input has no torque and no angular velocity: its orientation is the
# given one up to the rounding of the Euler angles' round trip (~1e-16 rad). The aerial
# recordings' Euler-rate drift turned it by 0.036 rad in yaw over 2 s (issue 36).
STILL_CAR_TURN_RAD = 1e-12


def test_still_car_in_the_air_does_not_turn_in_a_step_loop():
    state = np.array([0, 0, 1000, 0, 0, 650, 0, 0, 0, 0, 1.5708, 0], dtype=float)
    for keep_drift in (False, True):
        m = rlfit.Model("aerial", recording_drift=keep_drift)
        s = state.copy()
        turn = 0.0
        for _ in range(240):  # 2 s of 1/120 s steps, thrown up: back at z 1000
            s = m.step(s)
            turn = max(turn, np.abs(s[9:12] - state[9:12]).max())
        assert s[2] == pytest.approx(1000.0, abs=10.0)
        if keep_drift:
            assert turn > 0.01  # the drift, when asked for, is still there
        else:
            assert turn < STILL_CAR_TURN_RAD
    # The coefficients shown are the file's, drift included; only the prediction leaves it out.
    c = rlfit.Model("aerial").coefficients
    assert c["values"][c["names"].index("drift_y")] != 0.0


def test_start_states_a_model_does_not_cover_are_refused():
    # As rlsim predict refuses them (ModelStartProblem): one InputError naming the argument.
    ground = rlfit.Model("ground")
    air = [0, 0, 1000, 0, 0, 0]
    for call in (lambda s: ground.predict(s, 1.0), lambda s: ground.step(s),
                 lambda s: ground.rollout(s, [[0] * 9], 1.0)):
        with pytest.raises(rlfit.InputError, match="the ground model needs a car on the floor"):
            call(air)
    with pytest.raises(rlfit.InputError, match=r"states: row 2, column 1: .*on the floor"):
        ground.predict_batch(np.array([[0, 0, 17.01, 0, 0, 0], air], dtype=float), 1.0)
    assert ground.predict([0, 0, 17.01, 500, 0, 0], 1.0).shape == (121, 13)
    with pytest.raises(rlfit.InputError, match="the aerial model needs a car clear of the mesh"):
        rlfit.Model("aerial").step([0, 0, 17.01, 0, 0, 0])


@needs_data
def test_ball_and_wall_starts_overlapping_or_off_the_mesh_are_refused():
    ball = rlfit.Model("ball")
    with pytest.raises(rlfit.InputError, match="outside the arena mesh: the ball model needs"):
        ball.predict([-4000, -5000, 100, -3000, -3000, 0], 2.0)  # behind the corner curve
    with pytest.raises(rlfit.InputError, match="outside the arena mesh: the ball model needs"):
        # behind an upper corner's open curve: no axis ray meets a face, a diagonal a back face
        ball.predict([4013, -5446, 1983, 701, 448, -742], 2.0)
    with pytest.raises(rlfit.InputError, match="48 uu from the arena mesh"):
        ball.step([0, 0, 2000, 0, 0, 0])  # into the ceiling (z 2044)
    assert ball.predict([0, 0, 93.15, 0, 0, 0], 1.0)[-1, 3] == pytest.approx(93.15, abs=0.5)
    # 85 uu above the floor, falling: as deep as the recordings' fast bounces (the closest
    # recorded row is 81.7 uu from the mesh), so accepted; it bounces and stays in the arena.
    t = ball.predict([0, 0, 85, 0, 0, -1500], 2.0)
    assert t[:, 3].min() > 80 and t[-1, 3] < 2044
    # Deeper, as a fast ball is mid-bounce: 45 uu from the floor at 6000 uu/s toward it (50 uu a
    # tick) is a state a step leaves; at 1000 uu/s (8.3 uu a tick) or sideways it is refused.
    assert ball.predict([0, 0, 45, 0, 0, -6000], 1.0)[:, 3].min() > 40
    with pytest.raises(rlfit.InputError, match="less the 8.33333 uu it moves along the mesh's"):
        ball.step([0, 0, 45, 0, 0, -1000])
    with pytest.raises(rlfit.InputError, match=r"up to 9\.5\)$"):
        ball.step([0, 0, 45, 3000, 0, 0])
    with pytest.raises(rlfit.InputError, match="the wall model needs a car on a surface"):
        rlfit.Model("wall").step([0, 0, 1000, 0, 0, 0])


def test_coefficients_with_another_tick_rate_are_refused_for_prediction(tmp_path):
    with open(os.path.join(SRC, "results", "aerial", "coeffs.json")) as f:
        j = json.load(f)
    j["integration"]["tick_rate_hz"] = 60.0
    path = tmp_path / "c60.json"
    path.write_text(json.dumps(j))
    with pytest.raises(rlfit.InputError, match=r"c60.json: integration.tick_rate_hz = 60 Hz"):
        rlfit.Model("aerial", str(path))
