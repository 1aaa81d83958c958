#!/usr/bin/env bash
# Configures and builds rlfit (Release) into ./build: everything (the tools, tests, benchmarks,
# the Python module), or only the targets named with --target.
# Usage: scripts/build.sh [--target NAME ...] [extra cmake args]
set -euo pipefail
cd "$(dirname "$0")/.."
targets=()
args=()
while [ "$#" -gt 0 ]; do
  case "$1" in
    --target) targets+=("$2"); shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release ${args[@]+"${args[@]}"} > /dev/null
cmake --build build -j "$(nproc)" ${targets[@]+--target "${targets[@]}"}
