#!/usr/bin/env python3
"""The performance guard: instructions per operation of the hot paths (bench/perf_guard, under
callgrind) against the committed baselines of bench/perf_baseline.json; fails when one has grown
by more than the baseline's margin. Run by ctest (`perf_guard`, in scripts/test.sh).

Callgrind counts the instructions the program executes, the same on every run of one binary on
one machine however loaded it is, so one run is the figure. Each workload runs N and 2N
operations after an uninstrumented set-up, and one operation is (I(2N) - I(N)) / N: the set-up
and the loop's entry cancel out (bench/README.md, "Instructions").

The workloads come from two programs of one source: perf_guard (the models' hot paths) and
perf_guard_fit (the fit's evaluation, which links Ceres). A run of all workloads needs both; a
run with --only needs only the programs holding the named workloads.

Usage: scripts/perf_guard.py [--build DIR] [--only NAME,...] [--write]
  --build DIR  the build folder holding perf_guard and perf_guard_fit (default: build)
  --only       run only these workloads
  --write      measure and rewrite bench/perf_baseline.json's figures (keeping its margin), then
               the docs' generated parts (scripts/gen_model_docs.py); commit it with the reason
Exit codes: 0 every workload within its margin; 1 one or more grew beyond it; 2 usage, a failed
run or a bad baseline; 77 skipped (no valgrind, no datasets, or a build other than the
baseline's: another compiler, build type or flags counts other instructions).
Standard library only.
"""
import argparse
import datetime
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
BASELINE = os.path.join(ROOT, "bench", "perf_baseline.json")
SKIP = 77
PROGRAMS = ("perf_guard", "perf_guard_fit")


class GuardError(Exception):
    pass


def describe(exe):
    out = subprocess.run([exe, "--describe"], capture_output=True, text=True)
    if out.returncode != 0:
        raise GuardError(f"{exe} --describe failed: {out.stderr.strip()}")
    return json.loads(out.stdout)


def measure(exe, only):
    """{name: {n: instructions}} from one callgrind run of a guard program."""
    with tempfile.TemporaryDirectory(prefix="perf_guard.") as tmp:
        cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
               f"--callgrind-out-file={tmp}/cg.out", exe]
        if only:
            cmd += ["--only", ",".join(only)]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode == SKIP:
            raise SystemExit(print(run.stderr.strip(), file=sys.stderr) or SKIP)
        if run.returncode != 0:
            raise GuardError(f"{' '.join(cmd)} exited {run.returncode}:\n{run.stderr[-2000:]}")
        counts = {}
        for path in glob.glob(os.path.join(tmp, "cg.out.*")):
            label, total = None, None
            with open(path, encoding="utf-8", errors="replace") as f:
                for line in f:
                    m = re.match(r"desc: Trigger: Client Request: perf_guard (\S+) (\d+)$", line)
                    if m:
                        label = (m.group(1), int(m.group(2)))
                    m = re.match(r"totals: (\d+)", line)
                    if m:
                        total = int(m.group(1))
            if label and total is not None:
                counts.setdefault(label[0], {})[label[1]] = total
        return counts, run.stdout


def per_operation(counts, workloads):
    out = {}
    for w in workloads:
        c = counts.get(w["name"], {})
        n = w["n"]
        if n not in c or 2 * n not in c:
            continue
        out[w["name"]] = (c[2 * n] - c[n]) / n
    return out


def git_revision():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def figure(x):
    return f"{x:,.1f}" if x < 10000 else f"{x / 1000:,.1f}k"


def write_baseline(baseline, build, workloads, measured):
    baseline["build"] = build
    baseline["written"] = {"date": datetime.date.today().isoformat(),
                           "git_revision": git_revision()}
    entries = baseline.setdefault("workloads", {})
    for w in workloads:
        if w["name"] not in measured:
            continue
        entries[w["name"]] = {"instructions": round(measured[w["name"]], 1), "unit": w["unit"],
                              "n": w["n"], "what": w["what"]}
    tmp = f"{BASELINE}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(baseline, f, indent=2, ensure_ascii=False)
        f.write("\n")
    os.replace(tmp, BASELINE)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--only", default="")
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args(argv)
    only = [x for x in args.only.split(",") if x]
    try:
        if shutil.which("valgrind") is None:
            print("perf_guard: skipped: valgrind not found (scripts/install_deps.sh installs it)",
                  file=sys.stderr)
            return SKIP
        with open(BASELINE, encoding="utf-8") as f:
            baseline = json.load(f)
        margin = float(baseline["margin"])
        # Each program's workloads; a program not built is an error only when it is needed.
        programs, absent = [], []
        for name in PROGRAMS:
            exe = os.path.join(args.build, name)
            if os.path.isfile(exe):
                programs.append((exe, describe(exe)))
            else:
                absent.append(exe)
        def not_built(paths):
            targets = " and ".join(os.path.basename(p) for p in paths)
            plural = "s" if len(paths) > 1 else ""
            return f"{', '.join(paths)} not found (build the {targets} target{plural})"
        if not programs:
            raise GuardError(not_built(absent))
        builds = {info["build"] for _, info in programs}
        if len(builds) != 1:
            raise GuardError(f"the guard programs were built differently: {sorted(builds)}")
        build = builds.pop()
        workloads, plan = [], []
        for exe, info in programs:
            mine = [w for w in info["workloads"] if not only or w["name"] in only]
            workloads += mine
            if mine:
                plan.append((exe, [w["name"] for w in mine] if only else []))
        if only:
            unknown = set(only) - {w["name"] for w in workloads}
            if unknown:
                built = ", ".join(os.path.basename(exe) for exe, _ in programs)
                raise GuardError(f"unknown workload(s): {', '.join(sorted(unknown))} (in {built}"
                                 + (f"; not built: {', '.join(absent)}" if absent else "") + ")")
        elif absent:
            raise GuardError(not_built(absent))
        if not args.write and build != baseline.get("build"):
            print(f"perf_guard: skipped: this build ({build}) is not the baseline's "
                  f"({baseline.get('build')}); its counts differ by construction "
                  "(scripts/perf_guard.py --write records a baseline for it)", file=sys.stderr)
            return SKIP
        counts, stdout = {}, ""
        for exe, names in plan:
            c, out = measure(exe, names)
            counts.update(c)
            stdout += out
        measured = per_operation(counts, workloads)
    except (GuardError, OSError, KeyError, ValueError) as e:
        print(f"perf_guard: error: {e}", file=sys.stderr)
        return 2
    missing = [w["name"] for w in workloads if w["name"] not in measured]
    if missing:
        print(f"perf_guard: error: no counts for {', '.join(missing)}:\n{stdout}", file=sys.stderr)
        return 2
    if args.write:
        write_baseline(baseline, build, workloads, measured)
        print(f"wrote {os.path.relpath(BASELINE, ROOT)}")
        for w in workloads:
            print(f"  {w['name']}: {figure(measured[w['name']])} instructions per {w['unit']}")
        gen = os.path.join(ROOT, "scripts", "gen_model_docs.py")
        return subprocess.run([sys.executable, gen]).returncode
    entries = baseline.get("workloads", {})
    failed = []
    print(f"perf_guard: instructions per operation (callgrind), {build}; margin "
          f"{margin:.0%} over bench/perf_baseline.json")
    print(f"  {'workload':<24} {'baseline':>12} {'now':>12} {'ratio':>7}")
    for w in workloads:
        name, now = w["name"], measured[w["name"]]
        if name not in entries:
            print(f"  {name:<24} {'(none)':>12} {figure(now):>12}  no baseline: "
                  "scripts/perf_guard.py --write")
            failed.append(name)
            continue
        base = float(entries[name]["instructions"])
        ratio = now / base
        verdict = ""
        if ratio > 1.0 + margin:
            verdict = f"  FAILED: more than {1.0 + margin:.2f}x the baseline"
            failed.append(name)
        elif ratio < 1.0 - margin:
            verdict = "  faster: record it (scripts/perf_guard.py --write)"
        print(f"  {name:<24} {figure(base):>12} {figure(now):>12} {ratio:>7.3f}{verdict}")
    if failed:
        print(f"perf_guard: {len(failed)} workload(s) beyond the margin: {', '.join(failed)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
