#!/usr/bin/env bash
# ctest "plots": rlsim replay --plots on the recorded aerial episodes and plot_fit.py on the
# coefficients it used; the pages, their figures and every <img>/<a> target must exist.
# Usage: tests/plots_test.sh PATH/TO/rlsim   (exit 77 = skipped: no datasets root)
set -euo pipefail

rlsim=$1
src=$(cd "$(dirname "$0")/.." && pwd)
data=${RLFIT_DATA:-$src/../shared/datasets/lobot}
if [ ! -d "$data/car_control/aerial" ]; then
  echo "plots_test: SKIP: no aerial recordings under $data"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "plots_test: FAIL: $*" >&2; exit 1; }

# The page check; without chromium it still checks images and links.
check_page() {
  if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then
    "$src/scripts/check_index_page.sh" "$1" "$work/shot.png"
  else
    echo "plots_test: chromium missing: checking links only"
    CHECK_INDEX_LINKS_ONLY=1 "$src/scripts/check_index_page.sh" "$1"
  fi
}

# 1. The whole aerial set: more episodes than the default 6 figures.
run="$work/replay dir"  # a space, to prove the launcher passes an argv, not a shell string
"$rlsim" replay aerial --data "$data" --out "$run" --plots --quiet > "$work/stdout.txt"
for f in index.html summary.txt replay_summary.json plots/error_vs_horizon.png \
         plots/against_shipped_predictions.png; do
  [ -s "$run/$f" ] || fail "$run/$f missing or empty"
done
episodes=$(ls "$run"/*.csv | wc -l)
figures=$(ls "$run"/plots/trajectory_*.png | wc -l)
[ "$episodes" -gt 6 ] || fail "expected more than 6 aerial episodes, found $episodes"
[ "$figures" -eq 6 ] || fail "expected 6 episode figures by default, found $figures"
for csv in "$run"/*.csv; do
  grep -q "href=\"$(basename "$csv")\"" "$run/index.html" || fail "index.html lacks a link to $csv"
done
grep -q "plot_replay.py: wrote" "$work/stdout.txt" || fail "no report line from the script"
check_page "$run"

# 2. One episode: every episode is drawn, and the page still checks.
one="$work/one"
"$rlsim" replay aerial car_control/aerial/episode_00.csv --data "$data" --out "$one" --plots \
  --quiet > /dev/null
[ "$(ls "$one"/plots/trajectory_*.png | wc -l)" -eq 1 ] || fail "one episode, not one figure"
check_page "$one"

# 3. --plots without --out is a usage error.
if "$rlsim" replay aerial --data "$data" --plots --quiet > /dev/null 2>&1; then
  fail "--plots without --out was accepted"
fi

# 4. plot_fit.py on the coefficients the replay used, with and without std_errors.
/usr/bin/python3 - "$run/replay_summary.json" "$work" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["coefficients"]
c.pop("std_errors", None)
json.dump(c, open(sys.argv[2] + "/no_se.json", "w"))
c["coefficients"] = {k: v * 1.05 for k, v in c["coefficients"].items()}
c["std_errors"] = {k: abs(v) * 0.01 for k, v in c["coefficients"].items()}
json.dump(c, open(sys.argv[2] + "/with_se.json", "w"))
PY
for name in no_se with_se; do
  "$src/scripts/plot_fit.py" "$work/$name.json" "$work/fit_$name" > /dev/null
  [ -s "$work/fit_$name/coefficients.png" ] || fail "plot_fit.py drew nothing for $name"
  CHECK_INDEX_LINKS_ONLY=1 "$src/scripts/check_index_page.sh" "$work/fit_$name" > /dev/null
done
grep -q "std error" "$work/fit_with_se/index.html" || fail "std errors not shown"
if grep -q "std error" "$work/fit_no_se/index.html"; then fail "std error column without data"; fi

echo "plots_test: OK"
