#!/usr/bin/env bash
# The main job on the default dataset: fit the aerial model on the aerial recordings (one
# episode in four held out), replay them with the fitted coefficients, print the error
# tables and draw the report. Outputs go to out/ (override with OUT=...).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
out="${OUT:-out}"
mkdir -p "$out"
build/rlfit fit aerial --out "$out/aerial_coeffs.json" --plots "$out/fit_aerial"
build/rlsim replay aerial --coeffs "$out/aerial_coeffs.json" --out "$out/replay_aerial" --plots
echo "reports: $out/replay_aerial/index.html, $out/fit_aerial/index.html" >&2
