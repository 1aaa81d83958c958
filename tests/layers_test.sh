#!/usr/bin/env bash
# ctest "layers": no source file includes a header of a layer above its own (docs/design.md,
# "Layers"; the link of the per-layer static libraries enforces the same for definitions).
# Allowed project includes per folder:
#   src/common  common
#   src/models  common models
#   src/io      common models io
#   src/report  common models io report
#   src/replay  common models io report replay
#   fit         src/* fit
# and nothing under src/ includes fit/, bench/, python/ or tests/. A model's folder
# (src/models/NAME/, cmake/model_folders.cmake) is the models layer, but for its registration
# NAME_model.cc (its descriptor, compiled into rlfit_replay), which is the replay layer's;
# fit/models/ is the fit layer's.
# Usage: tests/layers_test.sh [SOURCE_DIR]   (prints each offending include; exit 1 if any)
set -euo pipefail
src=$(cd "${1:-$(dirname "$0")/..}" && pwd)
cd "$src"

allowed() {
  case "$1" in
    src/common) echo "src/common" ;;
    src/models) echo "src/common src/models" ;;
    src/io) echo "src/common src/models src/io" ;;
    src/report) echo "src/common src/models src/io src/report" ;;
    src/replay) echo "src/common src/models src/io src/report src/replay" ;;
    fit) echo "src/common src/models src/io src/report src/replay fit" ;;
  esac
}

# The layer of a project file (a path from the checkout's root).
layer_of() {
  case "$1" in
    src/models/*/*_model.cc) echo src/replay ;;
    src/models/*/*) echo src/models ;;
    fit/models/*) echo fit ;;
    *) dirname "$1" ;;
  esac
}

bad=0
checked=0
for file in src/common/*.h src/common/*.cc src/models/*.h src/models/*.cc src/models/*/*.h \
            src/models/*/*.cc src/io/*.h src/io/*.cc src/report/*.h src/report/*.cc \
            src/replay/*.h src/replay/*.cc fit/*.h fit/*.cc fit/models/*.h fit/models/*.cc; do
  [ -e "$file" ] || continue
  layer=$(layer_of "$file")
  ok=$(allowed "$layer")
  checked=$((checked + 1))
  # Project includes only: "src/...", "fit/...", "bench/...", "python/...", "tests/...".
  while IFS=: read -r line path; do
    dir=$(layer_of "$path")
    fine=0
    for a in $ok; do [ "$dir" = "$a" ] && fine=1; done
    if [ "$fine" -eq 0 ]; then
      echo "layers_test: $file:$line includes $path (a $layer file may include only: $ok)"
      bad=1
    fi
  done < <(grep -n -o -E '^#include "(src|fit|bench|python|tests)/[^"]+"' "$file" |
           sed -E 's/^([0-9]+):#include "([^"]+)"/\1:\2/')
done
# A folder of src/ the rules above do not know is a layer nobody placed.
for dir in src/*/; do
  dir=${dir%/}
  [ -n "$(allowed "$dir")" ] || { echo "layers_test: $dir is in no layer (tests/layers_test.sh)"; bad=1; }
done
[ "$checked" -gt 50 ] || { echo "layers_test: only $checked files found under $src"; exit 1; }
[ "$bad" -eq 0 ] && echo "layers_test: $checked files, no include above its layer"
exit "$bad"
