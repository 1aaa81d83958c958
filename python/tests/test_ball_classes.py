"""Tests of scripts/ball_classes.py (ctest `python`): free flight's residual, the contacts and
classes of synthetic episodes (hand-made triangles and rows), and the script on the recordings.

Run: PYTHONPATH=build/python python3 -m pytest -q python/tests/test_ball_classes.py
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import rlfit

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "scripts"))
import ball_classes as bc  # noqa: E402
import mesh_patches as mp  # noqa: E402

HAVE_DATA = rlfit.data_root() != ""
needs_data = pytest.mark.skipif(not HAVE_DATA, reason="no datasets root")

ROW_S = 1.0 / 60.96  # one recorded row, s
TICKS = 8  # sub-steps per row of the synthetic flights
# Free flight integrated with TICKS sub-steps against the script's one-step prediction differs
# by O(g dt drag dt) ~ 1e-4 uu/s: far below this.
FREE_TOL_UU_S = 1e-2


def flight(x0, v0, rows, wall_x=None, floor=True):
    """Rows of a ball under gravity and drag, bouncing (restitution 0.6, no friction) on the
    floor z = R and, if given, on a side wall at x = wall_x - R; (t, x, v)."""
    x, v = np.array(x0, float), np.array(v0, float)
    t, xs, vs = [], [], []
    dt = ROW_S / TICKS
    for k in range(rows):
        t.append(k * ROW_S)
        xs.append(x.copy())
        vs.append(v.copy())
        for _ in range(TICKS):
            v = (v + np.array([0.0, 0.0, bc.GRAVITY_Z]) * dt) * np.exp(bc.DRAG_1_S * dt)
            x = x + v * dt
            if floor and x[2] < bc.RADIUS_UU and v[2] < 0:
                v[2] = -0.6 * v[2] if -v[2] > 15 else 0.0
                x[2] = bc.RADIUS_UU
            if wall_x is not None and x[0] > wall_x - bc.RADIUS_UU and v[0] > 0:
                v[0] = -0.6 * v[0]
    return np.array(t), np.array(xs), np.array(vs)


def wall_mesh(wall_x=4096.0):
    """One large side-wall triangle at x = wall_x (normal -x) and one floor triangle."""
    wall = np.array([[wall_x, -6000.0, -10.0], [wall_x, 6000.0, -10.0], [wall_x, 0.0, 3000.0]])
    if np.cross(wall[1] - wall[0], wall[2] - wall[0])[0] > 0:
        wall = wall[[0, 2, 1]]
    floor = np.array([[-5000.0, -6000.0, 0.0], [5000.0, -6000.0, 0.0], [0.0, 6000.0, 0.0]])
    return mp.Mesh(np.array([wall, floor]))


def test_free_flight_has_no_residual():
    t, x, v = flight([0, 0, 1000], [500, -300, 200], 120, floor=False)
    r = bc.free_residual(v, np.diff(t))
    assert np.nanmax(r) < FREE_TOL_UU_S


def test_duplicated_row_gives_no_residual():
    v = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 50.0]])
    assert np.isnan(bc.free_residual(v, np.array([0.0]))[0])


def test_flight_only_is_free():
    t, x, v = flight([0, 0, 1000], [500, 0, 300], 200, floor=False)
    events, rolling = bc.contacts(wall_mesh(), x, v, np.diff(t))
    assert events == []
    assert bc.classify(events, rolling, len(t) - 1) == ("free", 0, 0)


def test_floor_bounces_counted_and_classed():
    # From z 600 at rest vertically: bounces at 1.2 s, then every ~0.8 s shorter.
    t, x, v = flight([0, 0, 600], [300, 0, 0], 200)
    events, rolling = bc.contacts(wall_mesh(), x, v, np.diff(t))
    first_row = int(np.sqrt(2 * (600 - bc.RADIUS_UU) / 650.0) / ROW_S)
    assert events[0][2] == "floor"
    assert abs(events[0][0] - first_row) <= 1
    cls, n, n_roll = bc.classify(events, rolling, 180)
    assert cls == "floor" and n == len([e for e in events if e[0] < 180]) and n >= 2
    # Before the first bounce: free flight.
    assert bc.classify(events, rolling, first_row - 2)[0] == "free"


def test_rolling_ball_is_rolling():
    t, x, v = flight([0, 0, bc.RADIUS_UU], [400, 0, 0], 60)
    events, rolling = bc.contacts(wall_mesh(), x, v, np.diff(t))
    assert rolling.sum() == 60
    assert bc.classify(events, rolling, 59)[0] == "rolling"


def test_side_wall_bounce_is_wall():
    t, x, v = flight([3500, 0, 1000], [1500, 0, 0], 60, wall_x=4096.0, floor=False)
    events, rolling = bc.contacts(wall_mesh(), x, v, np.diff(t))
    assert [e[2] for e in events] == ["side wall"]
    assert bc.classify(events, rolling, 59)[0] == "wall"
    # A label other than the flat walls' and the floor's makes the episode a curve episode.
    assert bc.classify([(3, 3, "corner curve")] + events, rolling, 59)[0] == "curve"


def write_summary(folder, errors):
    os.makedirs(folder)
    rows = []
    for name, (dx5, dx_last) in errors.items():
        for h, value in ((5.0, dx5), (None, dx_last)):
            rows.append({"quantity": "dx", "mode": "open_loop", "episode": name, "horizon_s": h,
                         "median": value, "split": "unseen"})
    rows.append({"quantity": "dx", "mode": "open_loop", "episode": None, "horizon_s": 5.0,
                 "median": 0.0, "split": "unseen"})
    with open(os.path.join(folder, "replay_summary.json"), "w") as f:
        json.dump({"errors": rows}, f)


def test_per_episode_dx_reads_open_loop_rows_only(tmp_path):
    folder = str(tmp_path / "run")
    write_summary(folder, {"episode_000000.csv": (3.0, 10.0)})
    assert bc.per_episode_dx(folder) == {"episode_000000.csv": {5.0: 3.0, "last": 10.0}}


def run_script(*args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, os.path.join(SRC, "scripts", "ball_classes.py"),
                           *args], capture_output=True, text=True, env=env)


def test_missing_run_folder_is_one_line_and_exit_2(tmp_path):
    out = run_script(f"a={tmp_path / 'nothing'}")
    assert out.returncode == 2
    assert len(out.stderr.strip().splitlines()) == 1 and "nothing" in out.stderr


@needs_data
def test_script_on_two_recorded_episodes(tmp_path):
    errors = {"episode_000000.csv": (77.0, 2094.0), "episode_000001.csv": (4.0, 6.0)}
    write_summary(str(tmp_path / "a"), errors)
    table = str(tmp_path / "classes.csv")
    out = run_script("--data", rlfit.data_root(), "--episodes-csv", table, f"a={tmp_path / 'a'}")
    assert out.returncode == 0, out.stderr
    lines = open(table).read().splitlines()
    assert len(lines) == 3 and lines[0].startswith("episode,class_5s")
    classes = {line.split(",")[0]: line.split(",")[1] for line in lines[1:]}
    # Episode 0 bounces at the back wall's foot at 1.34 s (NOTES, issue 12: a corner ramp).
    assert classes["episode_000000.csv"] == "curve"
    assert set(classes.values()) <= set(bc.CLASSES)


def test_rows_near_a_corner_diagonal_are_looked_up():
    # Episode 62's bounce at row 355 (NOTES tail31): centre 90.7 uu from a corner ramp at
    # x -3443, y -4489, z 229, inside |x| 3500 and |y| 4500.
    rows = np.array([[-3442.8, -4488.5, 229.3], [0.0, 0.0, 229.3], [3300.0, 4300.0, 229.3]])
    assert bc.near_walls(rows).tolist() == [True, False, True]


@needs_data
def test_corner_ramp_contact_on_the_diagonal_is_labelled():
    root = rlfit.data_root()
    mesh = mp.Mesh(mp.read_triangles(os.path.join(root, "meshes", "pitch.dat")))
    t, x, v, _ = bc.read_episode(os.path.join(root, "ball_trajectories", "episode_000062.csv"))
    events, _ = bc.contacts(mesh, x, v, np.diff(t))
    at = [patch for k, j, patch in events if k <= 355 <= j + 1]
    assert at == ["corner ramp"]
