#!/usr/bin/python3
"""What users wait for with the ball model, for two builds alternated in one session: `rlsim
predict ball --states F --duration 6` over 1,000 random in-arena states, `rlsim replay ball`
over the datasets (wall and user time), and rlfit.Model("ball").predict_batch over the same
1,000 states (time.perf_counter and process_time, one thread, a fresh interpreter per round).
Prints the median of the rounds for each build, the ratio B / A, and the median of the ratios
paired by round (cpu: user + sys of the process).

States: fixed seed, x uniform in [-3000, 3000], y in [-4000, 4000], z in [200, 1800] uu
(inside the pitch, clear of its rounded corners), velocity uniform in [-2000, 2000]^3 uu/s,
angular velocity in [-3, 3]^3 rad/s: they fall, bounce off floor and walls, and roll.

    bench/ball_tools_bench.py --build A=/path/to/main/build --build B=build --rounds 5
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

STATES = 1000
SEED = 20261126
PY_BATCH = """
import sys, time, numpy as np, rlfit
states = np.loadtxt(sys.argv[1], delimiter=",", skiprows=1)
model = rlfit.Model("ball")
t0, c0 = time.perf_counter(), time.process_time()
out = model.predict_batch(states, 6.0, threads=1)
print(time.perf_counter() - t0, out.shape[0], time.process_time() - c0)
"""


def write_states(path):
    rng = np.random.default_rng(SEED)
    x = rng.uniform([-3000, -4000, 200], [3000, 4000, 1800], (STATES, 3))
    v = rng.uniform(-2000, 2000, (STATES, 3))
    w = rng.uniform(-3, 3, (STATES, 3))
    np.savetxt(path, np.hstack([x, v, w]), delimiter=",", fmt="%.6f",
               header="x,y,z,vx,vy,vz,wx,wy,wz", comments="")


def timed(cmd, env=None):
    """(wall s, user + sys s of the child) of one run; stdout discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", action="append", required=True, help="NAME=BUILD_DIR, twice")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    builds = [b.split("=", 1) for b in args.build]
    work = tempfile.mkdtemp()
    states = os.path.join(work, "states.csv")
    write_states(states)
    times = {name: {} for name, _ in builds}
    for _ in range(args.rounds):
        for name, build in builds:
            rlsim = os.path.join(build, "rlsim")
            t = times[name]
            wall, cpu = timed([rlsim, "predict", "ball", "--states", states, "--duration", "6"])
            t.setdefault("predict wall", []).append(wall)
            t.setdefault("predict cpu", []).append(cpu)
            out = os.path.join(work, "replay_" + name)
            shutil.rmtree(out, ignore_errors=True)
            wall, cpu = timed([rlsim, "replay", "ball", "--out", out])
            t.setdefault("replay wall", []).append(wall)
            t.setdefault("replay cpu", []).append(cpu)
            env = dict(os.environ, PYTHONPATH=os.path.join(build, "python"))
            res = subprocess.run([sys.executable, "-c", PY_BATCH, states], check=True, env=env,
                                 capture_output=True, text=True).stdout.split()
            assert res[1] == str(STATES), res
            t.setdefault("predict_batch wall", []).append(float(res[0]))
            t.setdefault("predict_batch cpu", []).append(float(res[2]))
    print(f"{'median of ' + str(args.rounds) + ' rounds, s':28}" +
          "".join(f"{name:>10}" for name, _ in builds) + "   ratio  paired")
    first, last = builds[0][0], builds[-1][0]
    for key in times[first]:
        med = [statistics.median(times[name][key]) for name, _ in builds]
        paired = statistics.median(b / a for a, b in zip(times[first][key], times[last][key]))
        print(f"{key:28}" + "".join(f"{m:10.3f}" for m in med) +
              f"{med[-1] / med[0]:8.3f}{paired:8.3f}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
