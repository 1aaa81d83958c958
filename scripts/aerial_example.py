#!/usr/bin/env python3
"""A bot author's example (issue 36): a simple aerial at a predicted ball position with
rlfit.Ball, rlfit.Car and rlfit.Controls, in the manner of RLUtilities' examples.

1. Predict the ball: step a copy of it tick by tick (Ball.step) and keep its path.
2. Pick the target: the earliest predicted ball position high enough to aerial that the car
   can reach with boost: the acceleration it needs, a = 2 |dp| / T^2 with
   dp = target - position - velocity T - g T^2 / 2, below AERIAL_ACCEL_MAX.
3. Fly: hold jump for JUMP_HOLD_S, then every DECIDE_TICKS ticks choose the pitch/yaw stick
   whose short look-ahead (Car.copy() stepped LOOKAHEAD_TICKS ticks) points the nose closest
   to dp, and boost while the nose is within BOOST_MAX_ANGLE of it.
Prints the target, what the car did and its closest approach; with --json the same as JSON
(the test python/tests/test_aerial_example.py reads it).

Run: PYTHONPATH=build/python python3 scripts/aerial_example.py
"""
import argparse
import json
import math
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import numpy.typing as npt

import rlfit

TICK_S = rlfit.TICK_S
GRAVITY = np.array([0.0, 0.0, -650.0])  # uu/s^2 (the game's, datasets README)
# Acceleration the car can sustain toward a target, uu/s^2: boost and air throttle give
# about 1058 (results/aerial/coeffs.json boost_accel + air_throttle_accel); 15% margin for
# turning the nose first.
AERIAL_ACCEL_MAX = 900.0
MIN_TARGET_Z = 400.0    # uu: a ball lower than this is a ground play, not an aerial
JUMP_HOLD_S = 0.2       # s of jump held to take off (the jump's force lasts 0.2 s)
DECIDE_TICKS = 4        # ticks between stick decisions
LOOKAHEAD_TICKS = 12    # ticks a candidate stick is tried for
BOOST_MAX_ANGLE = math.radians(25.0)
HORIZON_S = 4.0         # s of ball prediction searched for a target


Vec = npt.NDArray[np.float64]


def predict_ball(ball: rlfit.Ball, horizon_s: float) -> Tuple[Vec, Vec]:
    """(times (n,), positions (n, 3)) of the ball, one row per tick from the next tick on."""
    b = ball.copy()
    times: List[float] = []
    positions: List[Vec] = []
    for k in range(1, int(round(horizon_s / TICK_S)) + 1):
        b.step(TICK_S)
        times.append(k * TICK_S)
        positions.append(b.position)
    return np.array(times), np.array(positions)


def needed(car_pos: Vec, car_vel: Vec, target: Vec, t: float) -> Vec:
    """dp (3,) the car must add to its ballistic path to be at target t s from now."""
    dp: Vec = target - car_pos - car_vel * t - 0.5 * GRAVITY * t * t
    return dp


def pick_target(car: rlfit.Car, times: Vec,
                positions: Vec) -> Tuple[Optional[int], Optional[float]]:
    """(index into times, acceleration needed) of the first reachable aerial target."""
    for i in range(len(times)):
        t, p = float(times[i]), positions[i]
        if p[2] < MIN_TARGET_Z or t < 0.5:
            continue
        a = 2.0 * float(np.linalg.norm(needed(car.position, car.velocity, p, t))) / (t * t)
        if a < AERIAL_ACCEL_MAX:
            return i, a
    return None, None


def choose_stick(car: rlfit.Car, direction: Vec, boost: bool) -> rlfit.Controls:
    """The pitch/yaw stick whose look-ahead points the nose closest to `direction`."""
    best, best_score = rlfit.Controls(), -2.0
    for pitch in (-1.0, 0.0, 1.0):
        for yaw in (-1.0, 0.0, 1.0):
            c = rlfit.Controls(pitch=pitch, yaw=yaw, boost=boost)
            trial = car.copy()
            trial.step(c, LOOKAHEAD_TICKS * TICK_S)
            score = float(np.dot(trial.forward, direction))
            if score > best_score:
                best, best_score = c, score
    return best


def run(ball: rlfit.Ball, car: rlfit.Car) -> Dict[str, Any]:
    times, positions = predict_ball(ball, HORIZON_S)
    index, accel = pick_target(car, times, positions)
    if index is None or accel is None:
        return {"target": None}
    t_target, target = float(times[index]), positions[index]
    start_distance = float(np.linalg.norm(target - car.position))
    boost_start = car.boost
    ticks = int(round(t_target / TICK_S))
    closest = (start_distance, 0.0)
    path: List[Vec] = []
    stick = rlfit.Controls()
    boost_ticks = 0
    for k in range(ticks):
        t = k * TICK_S
        remaining = t_target - t
        dp = needed(car.position, car.velocity, target, remaining)
        direction = dp / max(float(np.linalg.norm(dp)), 1e-9)
        if t < JUMP_HOLD_S:
            controls = rlfit.Controls(jump=True)
        else:
            aligned = float(np.dot(car.forward, direction)) > math.cos(BOOST_MAX_ANGLE)
            # Boost while the ballistic path falls short by more than a tick of thrust.
            want_boost = aligned and float(np.linalg.norm(dp)) > (
                0.5 * AERIAL_ACCEL_MAX * TICK_S * remaining)
            if k % DECIDE_TICKS == 0:
                stick = choose_stick(car, direction, want_boost)
            controls = rlfit.Controls(pitch=stick.pitch, yaw=stick.yaw, boost=want_boost)
        boost_ticks += int(controls.boost)
        car.step(controls, TICK_S)
        ball.step(TICK_S)
        path.append(car.position)
        d = float(np.linalg.norm(ball.position - car.position))
        if d < closest[0]:
            closest = (d, (k + 1) * TICK_S)
    track = np.array(path)
    return {
        "target": {"t_s": t_target, "position": target.tolist(), "accel_needed": accel},
        "start_distance": start_distance,
        "closest_distance": closest[0],
        "closest_t_s": closest[1],
        "boost_ticks": boost_ticks,
        "boost_used": boost_start - car.boost,
        "car_final": car.position.tolist(),
        "path_min": track.min(axis=0).tolist(),
        "path_max": track.max(axis=0).tolist(),
    }


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    # A ball lobbed toward the car's half, a car resting on the floor facing it, full boost.
    ball = rlfit.Ball(position=[200.0, 500.0, 100.0], velocity=[-100.0, -400.0, 1000.0])
    car = rlfit.Car(position=[0.0, -1000.0, 17.01], yaw=math.pi / 2, boost=100.0)
    r = run(ball, car)
    if args.json:
        print(json.dumps(r))
        return 0
    if r["target"] is None:
        print("no reachable aerial target in the next %.1f s" % HORIZON_S)
        return 1
    tg = r["target"]
    print("target: ball at (%.0f, %.0f, %.0f) uu in %.2f s (needs %.0f uu/s^2)"
          % (*tg["position"], tg["t_s"], tg["accel_needed"]))
    print("flew: jump %.2f s, boost %d ticks (%.1f boost used)"
          % (JUMP_HOLD_S, r["boost_ticks"], r["boost_used"]))
    print("closest approach to the ball: %.0f uu at %.2f s (target was %.0f uu away)"
          % (r["closest_distance"], r["closest_t_s"], r["start_distance"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
