"""Tests of rlfit.Ball, rlfit.Car and rlfit.Controls (issue 36): the whole car state carried in a
step loop (the jump regression), boost running out, the car staying inside the arena, copy(),
the flat arrays of predict, ticks.

Run: PYTHONPATH=build/python RLFIT_BUILD_DIR=build python3 -m pytest -q python/tests
"""
import ast
import copy
import math
import os
import subprocess
import sys

import numpy as np
import pytest

import rlfit

TICK = rlfit.TICK_S
needs_data = pytest.mark.skipif(rlfit.data_root() == "", reason="no datasets root (the arena mesh)")
REST_Z = 17.01  # uu: a car resting on its wheels (game::kCarRestHeight)


def held_jump_run(seconds_held, total_s):
    """z of a car held jump from rest for seconds_held, then released, one row per tick."""
    car = rlfit.Car(position=[0.0, 0.0, REST_Z])
    zs = [car.position[2]]
    for k in range(int(round(total_s / TICK))):
        car.step(rlfit.Controls(jump=k * TICK < seconds_held - 1e-9), TICK)
        zs.append(car.position[2])
    return np.array(zs), car


@needs_data
def test_held_jump_in_a_step_loop_is_rollout_bit_for_bit():
    # The regression: a 12-number step() forgot the jump and a held jump flew to z 1100.
    zs, car = held_jump_run(0.5, 2.0)
    peak = zs.max()
    assert 200.0 <= peak <= 300.0, peak
    # The car model lands 1.675 s after the press (tick 201) and stays on the floor. RocketSim's
    # wheels touch again at 1.667 s (tick 200; `rocketsim_compare.sh --scenarios`, car.md), so
    # the window is the game's landing within about a tick and a half, not the 1.6 s.
    assert car.on_ground and car.position[2] == pytest.approx(REST_Z, abs=1e-9)
    landed = int(np.argmax(zs[1:] <= REST_Z + 1e-9)) + 1
    assert 190 <= landed <= 205, landed
    controls = np.array([[0.0, 0, 0, 0, 0, 0, 1, 0, 0], [0.5, 0, 0, 0, 0, 0, 0, 0, 0]])
    rolled = rlfit.Model("car").rollout([0, 0, REST_Z, 0, 0, 0], controls, 2.0, TICK)
    # rollout acts on a control row from its own time, as step does: the same z, bit for bit.
    assert np.array_equal(rolled[:, 3], zs)


@needs_data
def test_step_loop_without_inputs_is_predict_bit_for_bit():
    # No input: predict's input lag plays no part, so the step loop is predict's rollout.
    state = [100.0, -200.0, 600.0, 300.0, 150.0, 200.0, 1.0, -2.0, 0.5, 0.3, 1.2, -0.4]
    rows = rlfit.Model("car").predict(state, 2.5, TICK)
    car = rlfit.Car.from_array(state)
    assert np.array_equal(car.to_array(), rows[0, 1:])
    for k in range(1, rows.shape[0]):
        car.step(rlfit.Controls(), TICK)
        assert np.array_equal(car.to_array(), rows[k, 1:]), k
    assert car.on_ground and car.position[2] == pytest.approx(REST_Z)  # it fell and landed


@needs_data
def test_step_loop_with_controls_is_rlsim_predict_bit_for_bit(tmp_path):
    # Controls that change on tick boundaries (every input, held 1-30 ticks) from a car on the
    # floor: it drives, jumps, dodges, boosts and lands. rlsim predict acts on a control row
    # from its own time, as step applies its controls, so every tick is the same doubles
    # (the CSV's 17 significant digits read back exactly).
    rng = np.random.default_rng(36)
    rows, k = [], 0
    while k * TICK < 3.0:
        rows.append([k * TICK, *rng.uniform(-1, 1, 5), *(rng.random(3) < [0.2, 0.5, 0.2])])
        k += int(rng.integers(1, 31))
    controls = np.array(rows, dtype=float)
    path = tmp_path / "controls.csv"
    with open(path, "w") as f:
        f.write("t_s,throttle,steer,pitch,yaw,roll,jump,boost,handbrake\n")
        for row in controls:
            f.write(",".join(repr(float(v)) for v in row) + "\n")
    state = [-500.0, 1000.0, REST_Z, 300.0, -200.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.7, 0.0]
    out = tmp_path / "car.csv"
    rlsim = os.path.join(os.environ.get("RLFIT_BUILD_DIR", "build"), "rlsim")
    p = subprocess.run([rlsim, "predict", "car", "--state", ",".join(repr(v) for v in state[:9]),
                        "--orientation", ",".join(repr(v) for v in state[9:]), "--controls",
                        str(path), "--duration", "3", "--out", str(out)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    columns = rlfit.Model("car").columns
    with open(out) as f:
        header = f.readline().strip().split(",")
        cli = np.array([[float(v) for v in line.split(",")] for line in f])
    cli = cli[:, [header.index(c) for c in columns]]
    car = rlfit.Car.from_array(state)
    mine = [car.to_array()]
    for k in range(1, cli.shape[0]):
        row = controls[np.searchsorted(controls[:, 0], (k - 1) * TICK, side="right") - 1]
        car.step(rlfit.Controls(throttle=row[1], steer=row[2], pitch=row[3], yaw=row[4],
                                roll=row[5], jump=bool(row[6]), boost=bool(row[7]),
                                handbrake=bool(row[8])), TICK)
        mine.append(car.to_array())
    mine = np.array(mine) + 0.0  # the CSV prints -0 as 0
    assert np.array_equal(cli[:, 1:], mine), np.argwhere(cli[:, 1:] != mine)[:3]
    assert car.jumped or car.position[2] > REST_Z + 1.0  # the controls did take it off the floor


@needs_data
def test_boost_runs_out_after_three_seconds_and_stops_thrusting():
    # Nose 38 degrees up so the thrust's vertical part (1058 sin 38 = 648 uu/s^2) holds the car
    # up against gravity (650); moving backward at 1200 uu/s so it stays under the speed cap
    # (2300 uu/s) and inside the arena for the 3 s of thrust (835 uu/s^2 along +y).
    car = rlfit.Car(position=[0.0, -2000.0, 1000.0], velocity=[0.0, -1200.0, 0.0], pitch=0.66,
                    yaw=math.pi / 2, boost=100.0)
    hold = rlfit.Controls(boost=True)
    amounts, speeds = [car.boost], [car.velocity @ car.forward]
    for _ in range(int(round(3.5 / TICK))):
        car.step(hold, TICK)
        amounts.append(car.boost)
        speeds.append(car.velocity @ car.forward)
    left = np.array(amounts)
    empty_at = int(np.argmax(left == 0.0))
    # 100 at 100/3 per second: 3 s, 360 ticks (RocketSim RLConst.h BOOST_USED_PER_SECOND).
    assert 359 <= empty_at <= 361, empty_at
    assert np.all(np.diff(left) <= 0.0) and left.min() == 0.0
    gain_before = (speeds[empty_at - 1] - speeds[empty_at - 31]) / (30 * TICK)
    gain_after = (speeds[empty_at + 30] - speeds[empty_at]) / (30 * TICK)
    assert gain_before > 500.0, gain_before  # boost: ~1000 uu/s^2 less gravity's share
    assert gain_after < 0.0, gain_after      # empty: only gravity (and drag) act along the nose


@needs_data
@pytest.mark.parametrize("yaw", [0.0, math.pi / 2])
def test_throttle_and_boost_from_the_centre_stay_inside_and_empty_the_boost(yaw):
    # Full throttle and boost for 10 s from the centre spot: along +x the car climbs the side
    # wall onto the ceiling; along +y it goes into the goal, up its back wall and onto its roof
    # (the case that flew through the roof, z 771 at 5 s, before the body contact).
    arena = rlfit.Arena()
    car = rlfit.Car(position=[0.0, 0.0, REST_Z], yaw=yaw, boost=100.0)
    hold = rlfit.Controls(throttle=1.0, boost=True)
    outside, amounts = [], [car.boost]
    for k in range(int(round(10.0 / TICK))):
        car.step(hold, TICK)
        if not arena.contains(car.position):
            outside.append((k, car.position.copy()))
        amounts.append(car.boost)
        assert np.linalg.norm(car.velocity) <= 2300.02
    assert outside == [], outside[:3]
    left = np.array(amounts)
    assert np.all(np.diff(left) <= 0.0) and left[-1] == 0.0
    assert 359 <= int(np.argmax(left == 0.0)) <= 361  # 3 s of boost (100 at 100/3 per s)


@needs_data
def test_arena_contains():
    arena = rlfit.Arena()
    assert arena.contains([0.0, 0.0, 100.0])
    assert not arena.contains([0.0, 0.0, -50.0])       # under the floor
    assert not arena.contains([5000.0, 0.0, 500.0])    # beyond the side wall (x 4096)
    assert not arena.contains([0.0, 0.0, 2200.0])      # above the ceiling (z 2044)
    with pytest.raises(rlfit.InputError):
        arena.contains([0.0, float("nan"), 0.0])


@needs_data
def test_copy_is_independent():
    car = rlfit.Car(position=[0.0, 0.0, REST_Z], boost=50.0)
    twin = car.copy()
    twin.step(rlfit.Controls(throttle=1.0, boost=True), 0.5)
    assert np.array_equal(car.position, [0.0, 0.0, REST_Z]) and car.boost == 50.0
    assert twin.position[0] > 100.0 and twin.boost < 50.0
    other = copy.deepcopy(car)
    car.step(rlfit.Controls(jump=True), 0.1)
    assert not other.jumped and car.jumped
    ball = rlfit.Ball(position=[0.0, 0.0, 500.0])
    b2 = ball.copy()
    b2.step(0.5)
    assert ball.position[2] == 500.0 and b2.position[2] < 500.0


@needs_data
def test_flat_array_round_trip():
    state = np.array([1000.0, -2000.0, 300.0, 100.0, 50.0, -20.0, 0.5, 0.1, -0.2, 0.2, -1.0, 0.3])
    car = rlfit.Car.from_array(state, boost=42.0)
    assert np.allclose(car.to_array(), state, rtol=0, atol=1e-12)
    assert car.boost == 42.0
    again = rlfit.Car(position=car.position, velocity=car.velocity,
                      angular_velocity=car.angular_velocity, orientation=car.orientation)
    assert np.allclose(again.to_array(), state, rtol=0, atol=1e-12)
    assert np.array_equal(rlfit.Controls(throttle=0.5, jump=True).to_array(),
                          [0.5, 0, 0, 0, 0, 1, 0, 0])
    ball_state = np.array([0.0, 100.0, 800.0, 10.0, 20.0, 30.0, 1.0, 2.0, 3.0])
    ball = rlfit.Ball.from_array(ball_state)
    assert np.array_equal(ball.to_array(), ball_state)
    # Ball.step is the ball model's tick: Model.step_ticks bit for bit.
    ticks = rlfit.Model("ball").step_ticks(ball_state, 90)
    ball.step(90 * TICK)
    assert np.array_equal(ball.to_array(), ticks[-1])


@needs_data
@pytest.mark.parametrize("speed", [1000.0, 4000.0, 6000.0])
def test_states_a_step_leaves_mid_bounce_round_trip(speed):
    # A fast ball's tick ends up to |v . n| / 120 into the floor (43.8 uu from it at 6000 uu/s,
    # deeper than any start at rest may be): from_array takes back every state step gives.
    for z0 in np.arange(150.0, 260.0, 7.3):
        ball = rlfit.Ball([0.0, 0.0, z0], [0.0, 0.0, -speed])
        for _ in range(10):
            ball.step(TICK)
            again = rlfit.Ball.from_array(ball.to_array())
            assert np.array_equal(again.to_array(), ball.to_array())


@needs_data
def test_dt_must_be_whole_ticks_and_inputs_in_range():
    car = rlfit.Car(position=[0.0, 0.0, REST_Z])
    for dt in (0.01, 0.0, -TICK, 1.5 * TICK, float("nan")):
        with pytest.raises(ValueError, match="whole number"):
            car.step(rlfit.Controls(), dt)
        with pytest.raises(ValueError, match="whole number"):
            rlfit.Ball(position=[0.0, 0.0, 500.0]).step(dt)
    car.step(rlfit.Controls(), 6 * TICK)  # 0.05 s: six ticks
    assert car.time == pytest.approx(0.05)
    with pytest.raises(ValueError, match="outside"):
        rlfit.Controls(throttle=1.5)
    with pytest.raises(ValueError, match="outside"):
        rlfit.Car(position=[0.0, 0.0, REST_Z], boost=120.0)
    with pytest.raises(ValueError, match="rotation"):
        rlfit.Car(position=[0.0, 0.0, 500.0], orientation=np.eye(3) * 2)
    with pytest.raises(ValueError, match="outside the arena"):
        rlfit.Car(position=[0.0, 0.0, 1.0e5])  # refused as rlsim predict refuses it
    with pytest.raises(ValueError, match="outside the arena"):
        rlfit.Ball(position=[0.0, 0.0, -500.0])  # under the floor
    # Nothing holds a car under the floor or behind a wall: it fell for ever.
    with pytest.raises(ValueError, match="outside the arena"):
        rlfit.Car(position=[0.0, 0.0, -100.0])
    with pytest.raises(ValueError, match="outside the arena"):
        rlfit.Car(position=[5000.0, 0.0, REST_Z])
    # The sticks are checked when set as when constructed (a NaN steer reached the state).
    k = rlfit.Controls(throttle=0.5)
    with pytest.raises(ValueError, match="outside"):
        k.throttle = 5.0
    with pytest.raises(ValueError):
        k.steer = math.nan
    assert (k.throttle, k.steer) == (0.5, 0.0)
    k.steer = -1.0
    assert k.steer == -1.0


STUBS = os.path.join(os.path.dirname(rlfit.__file__), "_rlfit.pyi")
SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_stubs_name_every_public_name_of_the_extension():
    with open(STUBS) as f:
        tree = ast.parse(f.read())
    stubbed = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            stubbed.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            stubbed.add(node.target.id)
    public = {n for n in dir(rlfit._rlfit) if not n.startswith("__") or n == "__version__"}
    assert public - stubbed == set()
    for cls in ("Ball", "Car", "Controls", "Model", "Arena"):
        node = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
        members = {n.name for n in node.body if isinstance(n, ast.FunctionDef)} | {
            n.target.id for n in node.body
            if isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name)}
        runtime = {n for n in dir(getattr(rlfit, cls)) if not n.startswith("_")}
        assert runtime - members == set(), cls


def test_stubs_and_example_pass_mypy():
    # Debian's python3-mypy (1.0.1): --strict on the stubs and the example.
    if subprocess.run([sys.executable, "-m", "mypy", "--version"],
                      capture_output=True).returncode != 0:
        pytest.skip("mypy is not installed (Debian: python3-mypy)")
    env = dict(os.environ, MYPYPATH=os.path.dirname(os.path.dirname(STUBS)))
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull,
         STUBS, os.path.join(SRC, "scripts", "aerial_example.py")],
        capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stdout + run.stderr


CAR_PROPERTIES = ("position", "velocity", "angular_velocity", "orientation", "boost", "on_ground",
                  "jumped", "double_jumped", "dodged", "jump_timer", "dodge_timer", "handbrake",
                  "time")


def same_car(a, b):
    for name in CAR_PROPERTIES:
        x, y = getattr(a, name), getattr(b, name)
        assert np.array_equal(x, y), (name, x, y)


def car_script():
    """Drives that visit every part of the car's state: floor, powerslide, the curve and the
    side wall, a jump and a double jump, a dodge; yields (car, controls of the next ticks)."""
    C = rlfit.Controls
    wall = ([C(throttle=1.0, boost=True)] * 40 + [C(throttle=1.0, steer=1.0)] * 40 +
            [C(throttle=1.0, steer=-1.0, handbrake=True)] * 40)
    double_jump = [C(jump=True)] * 8 + [C()] * 4 + [C(jump=True)] * 2 + [C()] * 30
    dodge = [C(throttle=1.0)] * 20 + [C(jump=True)] * 3 + [C()] * 5 + [C(pitch=-1.0, jump=True)] * 2 + [
        C(pitch=-1.0)] * 30
    for velocity, plan in (([1200.0, 0.0, 0.0], wall), ([0.0, 0.0, 0.0], double_jump),
                           ([500.0, 0.0, 0.0], dodge)):
        car = rlfit.Car(position=[3000.0, 0.0, REST_Z], velocity=velocity, boost=40.0)
        for k, u in enumerate(plan):
            yield car, plan[k:k + 30]
            car.step(u, TICK)


@needs_data
def test_pickled_car_steps_as_the_original():
    # A bot hands cars to worker processes (multiprocessing pickles them): the copy must carry
    # the whole state (timers, wheels, regime), so that it steps bit for bit as the original.
    import pickle
    seen = set()
    for k, (car, coming) in enumerate(car_script()):
        seen.add((car.on_ground, car.jumped, car.double_jumped, car.dodged, car.handbrake > 0,
                  abs(car.up[2]) < 0.5))
        if k % 7:
            continue
        twin = pickle.loads(pickle.dumps(car))
        same_car(car, twin)
        for u in coming:
            a = car.copy()
            a.step(u, TICK)
            twin.step(u, TICK)
            same_car(a, twin)
            car = a
    # The script reached a wall, a powerslide, a double jump and a dodge.
    assert any(wall for *_, wall in seen)
    assert any(hb for *_, hb, _ in seen)
    assert any(dj for _, _, dj, *_ in seen) and any(d for _, _, _, d, *_ in seen)


@needs_data
def test_pickled_ball_and_controls():
    import pickle
    ball = rlfit.Ball(position=[0.0, 0.0, 300.0], velocity=[800.0, -300.0, -1500.0],
                      angular_velocity=[1.0, 2.0, -3.0])
    for _ in range(10):
        ball.step(4 * TICK)
        twin = pickle.loads(pickle.dumps(ball))
        for name in ("position", "velocity", "angular_velocity", "time"):
            assert np.array_equal(getattr(ball, name), getattr(twin, name)), name
        a = ball.copy()
        a.step(0.5)
        twin.step(0.5)
        assert np.array_equal(a.to_array(), twin.to_array())
    u = rlfit.Controls(throttle=0.5, steer=-1.0, yaw=0.25, boost=True, handbrake=True)
    for other in (copy.copy(u), copy.deepcopy(u), u.copy(), pickle.loads(pickle.dumps(u))):
        assert other == u and other is not u and repr(other) == repr(u)
    v = u.copy()
    v.steer = 0.0
    assert u.steer == -1.0 and v != u and u != "Controls"


@needs_data
def test_pickle_reaches_another_process():
    import pickle
    car = rlfit.Car(position=[0.0, 0.0, REST_Z], boost=30.0)
    car.step(rlfit.Controls(jump=True), 0.1)
    script = ("import pickle, sys; import rlfit; c = pickle.loads(sys.stdin.buffer.read()); "
              "c.step(rlfit.Controls(), 0.5); print(repr(c.position.tolist()), c.jumped)")
    out = subprocess.run([sys.executable, "-c", script], input=pickle.dumps(car),
                         capture_output=True, check=True, env=dict(os.environ)).stdout.decode()
    car.step(rlfit.Controls(), 0.5)
    assert out.split()[-1] == "True"
    assert ast.literal_eval(out[:out.rindex("]") + 1]) == car.position.tolist()


@needs_data
def test_a_foreign_pickle_is_refused():
    car = rlfit.Car(position=[0.0, 0.0, REST_Z])
    version, coeffs, root, ticks, numbers = car.__getstate__()
    blank = rlfit.Car.__new__(rlfit.Car)
    bad_states = [
        (version + 1, coeffs, root, ticks, numbers),         # another version
        (version, coeffs, root, ticks, numbers[:-1]),        # a field missing
        (version, coeffs, root, ticks, numbers + [0.0]),     # a field too many
        (version, coeffs, root, ticks, [float("nan")] + numbers[1:]),
        (version, coeffs, root, "t", numbers),
        (version, coeffs, root, -1, numbers),                 # negative ticks
        (version, coeffs, root),
    ]
    for bad in bad_states:
        with pytest.raises(ValueError, match="pickled rlfit.Car"):
            rlfit.Car.__new__(rlfit.Car).__setstate__(bad)
    flags = list(numbers)
    flags[19] = 0.5  # on_floor, neither 0 nor 1 (after 18 body numbers and the regime)
    with pytest.raises(ValueError, match="not 0 or 1"):
        blank.__setstate__((version, coeffs, root, ticks, flags))


@needs_data
def test_time_counts_whole_ticks():
    # Time is ticks over the tick rate, never seconds summed: six steps of 1/120 s are 6/120 s
    # exactly (summed in floats they would be 0.049999999999999996).
    car = rlfit.Car(position=[0.0, 0.0, REST_Z])
    ball = rlfit.Ball(position=[0.0, 0.0, 500.0])
    for _ in range(6):
        car.step(rlfit.Controls(), TICK)
        ball.step(TICK)
    assert car.time == 6 / 120 and ball.time == 6 / 120
    car.step(rlfit.Controls(), 0.5)
    assert car.time == 66 / 120
