#!/usr/bin/env bash
# The main job on the default dataset: fit the aerial model on the aerial recordings (one
# episode in four held out), replay them with the fitted coefficients, print the error
# tables and draw the report. Outputs go to out/ (override with OUT=...).
# Recordings: $RLFIT_DATA, else the offline copy ../shared/datasets/lobot, else data/lobot;
# when none exists they are downloaded into data/lobot first (scripts/fetch_datasets.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
if [ -n "${RLFIT_DATA:-}" ]; then
  [ -d "$RLFIT_DATA" ] || { echo "run_default: RLFIT_DATA=$RLFIT_DATA is not a folder" >&2; exit 1; }
elif [ ! -d ../shared/datasets/lobot ] && [ ! -d data/lobot ]; then
  echo "run_default: no recordings found (RLFIT_DATA, ../shared/datasets/lobot, data/lobot);" \
       "fetching ${RLFIT_DATA_UPSTREAM:-https://github.com/samuelpmish/Lobot.git} into data/lobot" >&2
  scripts/fetch_datasets.sh data/lobot
fi
# Only the two tools it runs: the tests, benchmarks and the Python module are the test
# command's (scripts/test.sh).
scripts/build.sh --target rlsim --target rlfit
out="${OUT:-out}"
mkdir -p "$out"
build/rlfit fit aerial --out "$out/aerial_coeffs.json" --plots "$out/fit_aerial"
build/rlsim replay aerial --coeffs "$out/aerial_coeffs.json" --out "$out/replay_aerial" --plots
echo "reports: $out/replay_aerial/index.html, $out/fit_aerial/index.html" >&2
