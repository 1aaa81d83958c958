#!/usr/bin/env bash
# RocketSim side by side with this project's models: builds RocketSim from its own source
# (ROCKETSIM_DIR, default ../shared/refs/RocketSim beside the checkout; not vendored) with our
# driver bench/rocketsim/rocketsim_compare.cc into build-rocketsim/ (clang, ccache), then runs
# it on the recordings with rlsim replay's scoring. Arguments go to the driver, e.g.
#   scripts/rocketsim_compare.sh --delay-ticks 2 --sets ground,wall
#   scripts/rocketsim_compare.sh --scenarios   (a 0.5 s jump, 10 s of boost: docs/models/car.md)
# A tool run by hand for decision 0082's side-by-side table, not part of CI.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${RLFIT_ROCKETSIM_BUILD:-$root/build-rocketsim}
rocketsim=${ROCKETSIM_DIR:-$root/../shared/refs/RocketSim}
source "$root/scripts/peer_build.sh"
peer_build "$root/bench/rocketsim" "$build" clang++ rocketsim_compare -DROCKETSIM_DIR="$rocketsim"
exec "$build/rocketsim_compare" "$@"
