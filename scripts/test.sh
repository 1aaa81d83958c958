#!/usr/bin/env bash
# Installs dependencies, builds, and runs every test (ctest): unit tests, fit tests, the
# plot/report check and the regression check against results/ on the datasets.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install_deps.sh
scripts/build.sh
cd build
ctest --output-on-failure -j 2
