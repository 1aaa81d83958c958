"""Runs the bot author's example scripts/aerial_example.py (issue 36 item 5) and checks that its
aerial reaches the predicted ball and stays inside the arena.

Run: PYTHONPATH=build/python RLFIT_BUILD_DIR=build python3 -m pytest -q python/tests
"""
import json
import os
import subprocess
import sys

import pytest

import rlfit

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(SRC, "scripts", "aerial_example.py")
# Closest approach of the car's centre to the ball's that counts as a touch: the ball's radius
# (91.25 uu) plus the car's hitbox half-length (Octane 118.0 / 2 = 59 uu, RocketSim
# CarConfig.cpp), with a margin for the hitbox not being modelled.
TOUCH_UU = 180.0
# The arena's inside (the mesh's vertex box: |x| <= 4096, |y| <= 5120 without the goals,
# 0 <= z <= 2044).
ARENA = ((-4096.0, 4096.0), (-5120.0, 5120.0), (0.0, 2044.0))


@pytest.mark.skipif(rlfit.data_root() == "", reason="no datasets root (the arena mesh)")
def test_aerial_example_reaches_the_predicted_ball_inside_the_arena():
    run = subprocess.run([sys.executable, SCRIPT, "--json"], capture_output=True, text=True,
                         timeout=120)
    assert run.returncode == 0, run.stderr
    r = json.loads(run.stdout)
    assert r["target"] is not None
    assert r["target"]["position"][2] >= 400.0  # an aerial, not a ground play
    assert r["closest_distance"] < TOUCH_UU, r
    assert r["closest_distance"] < r["start_distance"] / 5.0, r
    assert r["boost_used"] > 0.0 and r["boost_ticks"] > 0
    for axis, (lo, hi) in enumerate(ARENA):
        assert lo <= r["path_min"][axis] and r["path_max"][axis] <= hi, (axis, r)
