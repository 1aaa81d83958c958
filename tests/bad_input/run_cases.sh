#!/usr/bin/env bash
# The bad-input corpus (issue 9): every tests/bad_input/*.case is one hostile or careless use
# of the tools, with the exit code and the one error line it must give.
# Usage: tests/bad_input/run_cases.sh BUILD_DIR [CASE...]
#
# A case file has one directive per line ('#' lines are comments; the first says what the
# case is):
#   setup: SHELL        run first, in order (fixtures go to $WORK)
#   run: SHELL          the command under test (one), with a 60 s limit
#   code: N             its expected exit code
#   message: TEXT       a fixed string its stderr must contain (several allowed)
#   check: SHELL        must succeed afterwards (e.g. an input is unchanged), several allowed
# Variables: $RLSIM, $RLFIT (the tools), $DATA (datasets root, may not exist), $SRC (source
# tree), $WORK (an empty temporary folder per case), $SYN (datasets/synthetic).
# A case whose code is 2 must print exactly one line on stderr. A case that needs the
# recordings and does not find them is skipped with 'needs: data'.
set -uo pipefail
build=$(cd "$1" && pwd); shift
src=$(cd "$(dirname "$0")/../.." && pwd)
export RLSIM="$build/rlsim" RLFIT="$build/rlfit" SRC="$src" SYN="$src/datasets/synthetic"
export DATA="${RLFIT_DATA:-$src/../shared/datasets/lobot}"
cases=("$@")
[ ${#cases[@]} -eq 0 ] && cases=("$src"/tests/bad_input/*.case)
passed=0 failed=0 skipped=0
for case_file in "${cases[@]}"; do
  name=$(basename "$case_file" .case)
  WORK=$(mktemp -d); export WORK
  setup=() checks=() messages=() run="" code=""
  needs=""
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in
      setup:*) setup+=("${line#setup: }") ;;
      run:*) run="${line#run: }" ;;
      code:*) code="${line#code: }" ;;
      message:*) messages+=("${line#message: }") ;;
      check:*) checks+=("${line#check: }") ;;
      needs:*) needs="${line#needs: }" ;;
      \#*|"") ;;
      *) echo "$name: bad directive: $line" >&2; failed=$((failed + 1)); continue 2 ;;
    esac
  done < "$case_file"
  if [ "$needs" = "data" ] && [ ! -d "$DATA/car_control" ]; then
    echo "SKIP $name (no datasets root)"; skipped=$((skipped + 1)); rm -rf "$WORK"; continue
  fi
  why=""
  for s in "${setup[@]}"; do
    (cd "$WORK" && bash -c "$s") > "$WORK/.setup.out" 2>&1 || { why="setup failed: $s: $(tail -2 "$WORK/.setup.out")"; break; }
  done
  if [ -z "$why" ]; then
    (cd "$WORK" && timeout 60 bash -c "$run") > "$WORK/.stdout" 2> "$WORK/.stderr" < /dev/null
    rc=$?
    if [ "$rc" = 124 ]; then why="timed out after 60 s"
    elif [ "$rc" != "$code" ]; then why="exit code $rc, expected $code"
    fi
    for m in "${messages[@]}"; do
      [ -z "$why" ] && ! grep -qF -- "$m" "$WORK/.stderr" && why="stderr lacks: $m"
    done
    if [ -z "$why" ] && [ "$code" = 2 ] && [ "$(wc -l < "$WORK/.stderr")" != 1 ]; then
      why="expected one line on stderr, got $(wc -l < "$WORK/.stderr")"
    fi
    for c in "${checks[@]}"; do
      [ -z "$why" ] && ! (cd "$WORK" && bash -c "$c") > /dev/null 2>&1 && why="check failed: $c"
    done
  fi
  if [ -z "$why" ]; then
    echo "ok   $name"; passed=$((passed + 1))
  else
    echo "FAIL $name: $why"; echo "  stderr: $(head -c 600 "$WORK/.stderr" 2>/dev/null)"
    failed=$((failed + 1))
  fi
  rm -rf "$WORK"
done
echo "bad input corpus: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
