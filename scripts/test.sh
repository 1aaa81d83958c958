#!/usr/bin/env bash
# Installs dependencies, builds, and runs every check CI runs: the sanitizer job (unit and fit
# tests plus the bad-input corpus under ASan+UBSan), a short fuzzing run of every libFuzzer
# target, then ctest on the release build (unit, fit, bad-input corpus, report page, install,
# fetch, the regression check against results/ on the datasets, and the performance guard:
# callgrind instruction counts against bench/perf_baseline.json). ctest runs last, so its
# summary is the closing line.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
scripts/sanitize.sh
scripts/fuzz.sh "${RLFIT_FUZZ_SECONDS:-20}"
cd build
ctest --output-on-failure -j 2
