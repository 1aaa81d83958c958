#!/usr/bin/env bash
# Lobot side by side with this project's hot paths (issue 38's peer table): builds Lobot from
# its own source (LOBOT_DIR, default ../shared/refs/Lobot beside the checkout; not vendored)
# with our driver bench/lobot/lobot_compare.cc into build-lobot/ (GCC, -O3 -DNDEBUG, ccache),
# then runs the arena query, the ball step, the aerial and the ground step on both:
#   scripts/lobot_compare.sh --speed 20000      CPU time per operation, median of 5 rounds
#   scripts/lobot_compare.sh --callgrind 3000   instructions per operation under callgrind
# A tool run by hand for README's speed table (bench/speed_figures.json), not part of CI.
set -euo pipefail
die() { echo "lobot_compare.sh: error: $*" >&2; exit 2; }
[[ $# -eq 2 ]] || die "expected --speed N or --callgrind N"
mode=$1 n=$2
[[ $mode == --speed || $mode == --callgrind ]] || die "unknown mode '$mode' (--speed N or --callgrind N)"
[[ $n =~ ^[1-9][0-9]{0,7}$ ]] || die "bad count '$n' (an integer from 1 to 99999999)"
root=$(cd "$(dirname "$0")/.." && pwd)
build=${RLFIT_LOBOT_BUILD:-$root/build-lobot}
lobot=${LOBOT_DIR:-$root/../shared/refs/Lobot}
[[ -f $lobot/src/Car.cpp && -f $lobot/inc/Ball.h ]] || die "no Lobot source at $lobot (set LOBOT_DIR)"
source "$root/scripts/peer_build.sh"
peer_build "$root/bench/lobot" "$build" g++ lobot_compare -DLOBOT_DIR="$lobot"
if [[ $mode == --speed ]]; then
  exec "$build/lobot_compare" --speed "$n"
fi
command -v valgrind > /dev/null || die "valgrind not found"
out=$(mktemp -d "${TMPDIR:-/tmp}/lobot_compare.XXXXXX")
trap 'rm -rf "$out"' EXIT
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/cg.out" \
  "$build/lobot_compare" --callgrind "$n" > "$out/run.log" 2>&1 ||
  { tail -20 "$out/run.log" >&2; exit 2; }
# Each dump: "desc: Trigger: Client Request: lobot_compare PATH SIDE OPS" and "totals: I".
python3 - "$out" "$n" <<'PY'
import glob, sys
out, n = sys.argv[1], int(sys.argv[2])
counts = {}
for name in glob.glob(out + "/cg.out*"):
    label = total = None
    for line in open(name):
        if line.startswith("desc: Trigger: Client Request: lobot_compare "):
            label = line.split("lobot_compare ", 1)[1].split()
        elif line.startswith("totals:") or (total is None and line.startswith("summary:")):
            total = int(line.split()[1])
    if label and total is not None:
        counts[(label[0], label[1], int(label[2]))] = total
paths = sorted({k[0] for k in counts}, key=["arena_query", "ball_step", "aerial_step",
                                            "ground_step"].index)
if not paths:
    sys.exit("lobot_compare.sh: error: no callgrind dumps found in " + out)
print(f"instructions per operation, (I({2 * n}) - I({n})) / {n}, one binary (GCC, -O3 -DNDEBUG)\n")
print("| path | rlfit | Lobot | Lobot / rlfit |\n|---|---|---|---|")
for p in paths:
    per = {s: (counts[(p, s, 2 * n)] - counts[(p, s, n)]) / n for s in ("rlfit", "Lobot")}
    print(f"| {p} | {per['rlfit']:,.1f} | {per['Lobot']:,.1f} | {per['Lobot'] / per['rlfit']:.2f} |")
PY
