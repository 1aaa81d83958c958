#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ (clang, ASan + UBSan) into build-fuzz/ and runs each
# for SECONDS (default 30) on a temporary copy of its seed corpus fuzz/corpus/<target>/, then
# the report page's Python target fuzz/report_page_fuzz.py as long (its corpus: one name a file).
# Prints per target the executions, exec/s and time. Exits non-zero on a crash, leak or
# timeout; the reproducer and the log stay in build-fuzz/artifacts/<target>/.
# Usage: scripts/fuzz.sh [SECONDS]
set -euo pipefail
seconds=${1:-30}
case "$seconds" in ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 2 ;; esac
src=$(cd "$(dirname "$0")/.." && pwd)
build="$src/build-fuzz"

# Debian packages: clang and its runtime libraries (libFuzzer, sanitizers), plus what
# rlfit_core builds with.
"$src/scripts/install_deps.sh" cmake make clang libclang-rt-14-dev libeigen3-dev libfccp-dev \
  nlohmann-json3-dev

launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
CC=clang CXX=clang++ cmake -S "$src" -B "$build" -DRLFIT_FUZZ=ON -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER=clang++ "${launcher[@]}" > /dev/null
cmake --build "$build" -j "$(nproc)"

status=0
printf '%-16s %12s %10s %8s  %s\n' target executions exec/s time_s result
while IFS= read -r target; do
  [ -n "$target" ] || continue
  corpus=$(mktemp -d)
  [ -d "$src/fuzz/corpus/$target" ] && cp -R "$src/fuzz/corpus/$target/." "$corpus/"
  artifacts="$build/artifacts/$target"
  mkdir -p "$artifacts"
  log="$artifacts/fuzz.log"
  start=$(date +%s)
  rc=0
  dict=()  # a target's dictionary (fuzz/<target>.dict), when it has one
  [ -f "$src/fuzz/$target.dict" ] && dict=(-dict="$src/fuzz/$target.dict")
  "$build/fuzz/$target" "${dict[@]}" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$artifacts/" "$corpus" > "$log" 2>&1 || rc=$?
  elapsed=$(( $(date +%s) - start ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  result=ok
  if [ "$rc" -ne 0 ]; then
    result="FAILED (exit $rc): $(grep -m1 -E '^==[0-9]+==ERROR|^SUMMARY|FUZZ_CHECK|deadly signal|timeout' "$log" || echo 'see log'); log and reproducer in $artifacts/"
    status=1
  fi
  printf '%-16s %12s %10s %8s  %s\n' "$target" "${execs:-?}" "${rate:-?}" "$elapsed" "$result"
  rm -rf "$corpus"
done < "$build/fuzz_targets.txt"

# The report page is drawn by Python (scripts/plot_replay.py), so its target is Python too
# (fuzz/report_page_fuzz.py: a seeded mutation fuzzer whose pages Python's HTML parser checks).
"$src/scripts/install_deps.sh" python3-numpy python3-jinja2
target=report_page_fuzz
artifacts="$build/artifacts/$target"
mkdir -p "$artifacts"
log="$artifacts/fuzz.log"
start=$(date +%s)
rc=0
/usr/bin/python3 "$src/fuzz/$target.py" --seconds "$seconds" --seed "$(date +%s)" \
  --artifacts "$artifacts" > "$log" 2>&1 || rc=$?
elapsed=$(( $(date +%s) - start ))
execs=$(sed -n 's/^report_page_fuzz: \([0-9]*\) executions.*/\1/p' "$log" | tail -1)
rate=$(sed -n 's/.* executions, \([0-9]*\) exec\/s$/\1/p' "$log" | tail -1)
result=ok
if [ "$rc" -ne 0 ]; then
  result="FAILED (exit $rc): $(grep -m1 -E 'FUZZ_CHECK|Error|error' "$log" || echo 'see log'); log and names in $artifacts/"
  status=1
fi
printf '%-16s %12s %10s %8s  %s\n' "$target" "${execs:-?}" "${rate:-?}" "$elapsed" "$result"
exit "$status"
