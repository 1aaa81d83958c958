#!/usr/bin/env bash
# Installs the Debian packages rlfit builds, tests and plots with (clang for the fuzzers,
# chromium for the report-page screenshot check, python3-distributed and python3-dask for
# rlfit.dask and its tests on a LocalCluster, valgrind for the performance guard, python3-mypy
# for the type check of the Python stubs and the example). Safe to
# re-run.
# Usage: scripts/install_deps.sh [PACKAGE ...]   (the packages given instead of rlfit's list)
set -euo pipefail
PKGS=(cmake g++ make git libceres-dev libeigen3-dev libcli11-dev libfccp-dev nlohmann-json3-dev
      doctest-dev libbenchmark-dev valgrind python3-matplotlib python3-numpy python3-jinja2
      clang libclang-rt-14-dev chromium
      pybind11-dev python3-dev python3-pytest python3-distributed python3-dask python3-mypy)
[ "$#" -gt 0 ] && PKGS=("$@")
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
