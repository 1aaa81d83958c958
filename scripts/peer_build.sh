# Sourced by scripts/lobot_compare.sh and scripts/rocketsim_compare.sh: configures and builds a
# peer's side-by-side driver (its CMake project in bench/PEER/, the peer's source folder passed
# as a cache variable) into its own build folder with ccache; on failure prints the log's tail
# and exits 2.
# Usage: peer_build SOURCE_DIR BUILD_DIR COMPILER TARGET -DVAR=PATH
peer_build() {
  local src=$1 build=$2 compiler=$3 target=$4 define=$5
  mkdir -p "$build"
  cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$compiler" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
    "$define" > "$build/cmake.log" 2>&1 ||
    { cat "$build/cmake.log" >&2; exit 2; }
  cmake --build "$build" -j"${JOBS:-2}" --target "$target" > "$build/build.log" 2>&1 ||
    { tail -40 "$build/build.log" >&2; exit 2; }
}
