"""Tests of scripts/flat_bounces.py (ctest `python`): floor bounces simulated tick by tick with a
known contact law and recorded as blends of two ticks, then measured back; and the script on
the recordings.

Run: /usr/bin/python3 -m pytest -q python/tests/test_flat_bounces.py
"""
import math
import os
import sys

import numpy as np
import pytest

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(SRC, "scripts"))
import flat_bounces as fb  # noqa: E402

try:  # the build tree's module finds the datasets root as the tools do
    import rlfit
    DATA_ROOT = rlfit.data_root()
except ImportError:
    DATA_ROOT = os.environ.get("RLFIT_DATA", "")

RADIUS = 93.15
DRAG = -0.0305
ORIGIN_ROWS = 0.37  # row 0's place on the tick clock, clock rows
# The script estimates the clock origin from the straddled bounces' fractions (off by 2.5e-5
# clock rows here), which moves the fitted arcs by up to ~1e-3 uu at 2000 uu/s (measured: the
# push off the simulated law by at most 0.00096 uu) and e by up to 4e-6.
PUSH_TOL_UU = 2e-3
E_TOL = 1e-5


def episode(vz0, push_fraction, slop, restitution=0.6, margin=0.0, rows=400):
    """Rows (x, v, clock rows per step) of a ball bouncing on the floor, simulated on ticks:
    contact at a tick whose centre is below RADIUS + margin, rebound `restitution` times the
    pre-gravity normal speed, push-out push_fraction max(0, depth - slop); each row the blend of
    the ticks around it."""
    ticks = int(rows * fb.TICKS_PER_ROW) + 4
    e = math.exp(DRAG * fb.TICK_S)
    state = np.array([0.0, 0.0, 900.0, 400.0, 0.0, vz0])
    tick_states = []
    for _ in range(ticks):
        tick_states.append(state.copy())
        x, v = state[:3].copy(), state[3:].copy()
        v1 = v * e
        v1[2] += fb.GRAVITY * fb.TICK_S
        push = 0.0
        depth = RADIUS - x[2]
        if depth > -margin and v1[2] < 0.0:
            v1[2] = restitution * max(0.0, -v[2])
        if depth > slop:
            push = push_fraction * (depth - slop)
        x = x + v1 * fb.TICK_S
        x[2] += push
        state = np.concatenate([x, v1])
    out = []
    for r in range(rows):
        tau = (ORIGIN_ROWS + r) * fb.TICKS_PER_ROW
        j = math.floor(tau)
        a = tau - j
        out.append((1 - a) * tick_states[j] + a * tick_states[j + 1])
    out = np.array(out)
    return out[:, :3], out[:, 3:], np.ones(rows - 1, dtype=int)


def measured(vz0s, **law):
    rows = []
    for vz0 in vz0s:
        x, v, crow = episode(vz0, **law)
        rows += fb.floor_bounces(x, v, crow, RADIUS, DRAG)
    return rows


def test_clock_origin_is_recovered():
    x, v, crow = episode(-1500.0, 0.8, 1.9)
    origin = fb.clock_origin(fb.jumps(x, v, crow, DRAG), crow)
    assert origin is not None
    assert abs(origin - ORIGIN_ROWS) < 0.01


def test_the_law_is_measured_back():
    # Bounces of many depths and speeds: the restitution and the push-out come back as
    # simulated (the arcs are exact free flight; the clock origin is estimated).
    rows = measured(np.linspace(-2400.0, -900.0, 12), push_fraction=0.8, slop=1.9)
    assert len(rows) >= 12
    for r in rows:
        assert r["e"] == pytest.approx(0.6, abs=E_TOL)
        assert r["push"] == pytest.approx(0.8 * max(0.0, r["d"] - 1.9), abs=PUSH_TOL_UU)
        assert 0.0 <= r["d"] < 2400.0 / 120.0 + 1.0
    d = np.array([r["d"] for r in rows])
    push = np.array([r["push"] for r in rows])
    assert (d > 1.9).sum() >= 5 and (d < 1.9).sum() >= 2
    knee, slope, worst, outliers = fb.knee_fit(d, push)
    assert knee == pytest.approx(1.9, abs=0.01)
    assert slope == pytest.approx(0.8, abs=0.01)
    assert outliers == 0


def test_another_law_gives_other_numbers():
    # Half the depth beyond 2.5 uu and a restitution of 0.5: the script must see them. (The
    # tick after the contact starts at most 1.25 uu deep, within the slop: one push per bounce,
    # as the script assumes.)
    rows = measured(np.linspace(-2400.0, -900.0, 12), push_fraction=0.5, slop=2.5,
                    restitution=0.5)
    assert rows
    for r in rows:
        assert r["e"] == pytest.approx(0.5, abs=E_TOL)
        assert r["push"] == pytest.approx(0.5 * max(0.0, r["d"] - 2.5), abs=PUSH_TOL_UU)
    d = np.array([r["d"] for r in rows])
    push = np.array([r["push"] for r in rows])
    knee, slope, _, _ = fb.knee_fit(d, push)
    assert knee == pytest.approx(2.5, abs=0.01)
    assert slope == pytest.approx(0.5, abs=0.01)


def test_a_speculative_contact_shows_as_a_late_bounce():
    # Contacts already 0.3 uu above the radius (the old model's margin): a bounce whose first
    # tick within the margin is a gap no longer reads as 0.6 at the first tick below the radius.
    rows = measured(np.linspace(-2400.0, -900.0, 12), push_fraction=0.8, slop=1.9, margin=0.3)
    off = [r for r in rows if abs(r["e"] - 0.6) > 1e-3]
    assert off


@pytest.mark.skipif(not os.path.isdir(os.path.join(DATA_ROOT, "ball_trajectories")),
                    reason="no datasets root")
def test_the_recordings(capsys):
    # NOTES push30: 747 bounces, 0.797 beyond 1.900 uu.
    assert fb.main(["--data", DATA_ROOT]) == 0
    out = capsys.readouterr().out
    assert "floor bounces" in out and "push = 0.79" in out
