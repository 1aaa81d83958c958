#!/usr/bin/env bash
# The sanitizer job: builds the unit and fit tests with AddressSanitizer and
# UndefinedBehaviorSanitizer (RLFIT_SANITIZE, build-asan/) and runs them; any report fails.
# Usage: scripts/sanitize.sh   (after scripts/install_deps.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
# -g1 (line tables: ASan's and UBSan's stack traces keep function, file and line) instead of
# RelWithDebInfo's full -g: the same machine code, so the same checks and test times, but the
# Jet-heavy fit sources compile in half the time without their full debug information
# (fit/car_fit.cc, the build's longest unit: 451 s of CPU and 5.3 GB at -O2 -g, 228 s and
# 3.6 GB at -O2 -g1; decision 0038). -O1 (AddressSanitizer's recommended level):
# car_fit.cc grew to over 19 min of CPU at -O2 -g1 under the sanitizers, 5.0 min at -O1
# (2026-11-29, idle machine).
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRLFIT_SANITIZE=ON \
      -DRLFIT_BUILD_BENCH=OFF "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" > /dev/null
cmake --build build-asan -j "$(nproc)" --target rlfit_tests rlfit_fit_tests rlsim rlfit
# halt_on_error: the first report fails the run; detect_leaks: the tests own every allocation.
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
echo "sanitize: unit tests under ASan+UBSan" >&2
build-asan/rlfit_tests
echo "sanitize: fit tests under ASan+UBSan" >&2
build-asan/rlfit_fit_tests
echo "sanitize: bad-input corpus under ASan+UBSan" >&2
bash tests/bad_input/run_cases.sh build-asan
