#!/usr/bin/env bash
# ctest "fetch": scripts/fetch_datasets.sh against a local git repository standing in for the
# upstream (assets/ with synthetic episodes from datasets/synthetic/, a ball episode with dropped
# frames built like public episode 343, a two-triangle meshes/pitch.dat, a LICENSE): the layout
# arrives with its dataset manifest, rlsim replays it (the ball episode cut at its gap), a re-run
# is a no-op, and a failing or wrong upstream leaves no DEST behind. No network.
# Usage: tests/fetch_test.sh PATH/TO/rlsim   (exit 77 = skipped: git missing)
set -euo pipefail

rlsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$(dirname "$0")/.." && pwd)
fetch="$src/scripts/fetch_datasets.sh"
command -v git >/dev/null || { echo "fetch_test: SKIP: git is not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "fetch_test: FAIL: $*" >&2; exit 1; }
export GIT_CONFIG_NOSYSTEM=1 HOME="$work/home"  # no user or system git settings
mkdir -p "$HOME"
git_quiet() { git -c user.name=test -c user.email=test@example.invalid "$@" > /dev/null; }

# 1. The stand-in upstream: the same layout as Lobot's assets/.
up="$work/upstream"
mkdir -p "$up/assets/car_control/aerial" "$up/assets/ball_trajectories" "$up/assets/meshes" \
         "$up/other"
cp "$src/datasets/synthetic/aerial/episode_9000.csv" "$up/assets/car_control/aerial/episode_00.csv"
cp "$src/datasets/synthetic/aerial/episode_9005.csv" "$up/assets/car_control/aerial/episode_01.csv"
cp "$src/datasets/synthetic/ball/episode_900001.csv" "$up/assets/ball_trajectories/"
# Rows 336-337 repeat row 335's time stamp, row 338 comes 4.82 rows later (as episode 343).
cp "$src/tests/fixtures/dropped_frames/ball_dropped_frames.csv" \
   "$up/assets/ball_trajectories/episode_000343.csv"
# A floor and a ceiling: rows outside the mesh's box are not scored, so the stand-in must
# enclose the episodes' positions.
printf -- '-4096\t-5120\t0\t4096\t-5120\t0\t4096\t5120\t0\n-4096\t-5120\t0\t4096\t5120\t0\t-4096\t5120\t0\n' \
  > "$up/assets/meshes/pitch.dat"
printf -- '-4096\t-5120\t2044\t4096\t5120\t2044\t4096\t-5120\t2044\n-4096\t-5120\t2044\t-4096\t5120\t2044\t4096\t5120\t2044\n' \
  >> "$up/assets/meshes/pitch.dat"
echo "MIT License (test stand-in)" > "$up/LICENSE"
echo "outside assets/, must not be fetched" > "$up/other/big.bin"
git_quiet -C "$up" init -q
git_quiet -C "$up" add -A
git_quiet -C "$up" commit -q -m "stand-in upstream"

check_layout() {
  [ -f "$1/car_control/aerial/episode_00.csv" ] || fail "$1: car_control/aerial/episode_00.csv missing"
  [ -f "$1/ball_trajectories/episode_900001.csv" ] || fail "$1: ball_trajectories missing"
  [ -f "$1/meshes/pitch.dat" ] || fail "$1: meshes/pitch.dat missing"
  [ -f "$1/LICENSE" ] || fail "$1: LICENSE missing"
  cmp -s "$1/rlfit_dataset.json" "$src/datasets/manifests/lobot.json" ||
    fail "$1: the dataset manifest rlfit_dataset.json is missing or not the shipped one"
  [ ! -e "$1/other" ] && [ ! -e "$1/assets" ] && [ ! -e "$1/.git" ] || fail "$1: not the assets/ layout"
}

# 2. Fetch through file:// and through a plain path; DEST's parent need not exist.
dest="$work/data/nested/lobot"
RLFIT_DATA_UPSTREAM="file://$up" "$fetch" "$dest" 2> "$work/fetch.log" ||
  { cat "$work/fetch.log" >&2; fail "fetch from file://$up failed"; }
check_layout "$dest"
RLFIT_DATA_UPSTREAM="$up" "$fetch" "$work/plain" 2> "$work/fetch2.log" ||
  { cat "$work/fetch2.log" >&2; fail "fetch from the path $up failed"; }
check_layout "$work/plain"
[ -z "$(ls -A "$work/data/nested" | grep -v '^lobot$' || true)" ] || fail "temporary folders left beside DEST"

# 3. The fetched layout replays (the aerial model reads car_control/aerial under --data).
"$rlsim" replay aerial --data "$dest" --out "$work/out" --quiet > "$work/replay.txt" ||
  fail "rlsim replay on the fetched data failed"
[ "$(ls "$work/out"/episode_*.csv | wc -l)" -eq 2 ] || fail "expected 2 replayed episodes"
( cd "$work" && RLFIT_DATA="$dest" "$rlsim" replay aerial car_control/aerial/episode_01.csv \
    --out "$work/out1" --quiet > /dev/null ) || fail "replay of a path under the fetched root failed"

# The ball recordings (the model's defaults, found through the installed manifest), the
# dropped-frame episode among them: read, cut at its gap, and the cut reported.
"$rlsim" replay ball --data "$dest" --out "$work/ball" --quiet > "$work/ball.txt" 2>&1 ||
  fail "rlsim replay ball on the fetched data failed: $(cat "$work/ball.txt")"
grep -q "^note .*episode_000343.csv: cut at row 338: time jumps by 0.0791" "$work/ball.txt" ||
  fail "the cut of the dropped-frame episode is not reported: $(head -20 "$work/ball.txt")"
[ -f "$work/ball/episode_000343_seg00.csv" ] && [ -f "$work/ball/episode_000343_seg01.csv" ] ||
  fail "the dropped-frame episode was not replayed as two parts: $(ls "$work/ball")"

# 4. Re-running is a no-op (says so, changes nothing).
touch "$dest/marker"
RLFIT_DATA_UPSTREAM="file://$work/nowhere" "$fetch" "$dest" 2> "$work/again.log" ||
  fail "re-run on a complete DEST failed: $(cat "$work/again.log")"
grep -q "nothing to do" "$work/again.log" || fail "re-run did not say it had nothing to do"
[ -f "$dest/marker" ] || fail "re-run touched DEST"

# 5. A failing upstream leaves no DEST (nor its new parent) behind, with one clear error.
bad="$work/fresh/lobot"
if RLFIT_DATA_UPSTREAM="file://$work/nowhere" "$fetch" "$bad" 2> "$work/bad.log"; then
  fail "fetch from a missing upstream succeeded"
fi
[ ! -e "$bad" ] && [ ! -e "$work/fresh" ] || fail "a failed fetch left $bad or its parent behind"
grep -q "fetch_datasets: error: cannot clone" "$work/bad.log" || fail "unclear error: $(cat "$work/bad.log")"

# 6. An upstream without the layout is refused, again leaving nothing.
wrong="$work/wrong"
mkdir -p "$wrong/assets/car_control"
echo x > "$wrong/assets/car_control/x.csv"
git_quiet -C "$wrong" init -q
git_quiet -C "$wrong" add -A
git_quiet -C "$wrong" commit -q -m "not lobot"
if RLFIT_DATA_UPSTREAM="file://$wrong" "$fetch" "$work/w/lobot" 2> "$work/wrong.log"; then
  fail "fetch from a repository without the layout succeeded"
fi
[ ! -e "$work/w" ] || fail "a refused fetch left $work/w behind"
grep -q "not the Lobot repository" "$work/wrong.log" || fail "unclear error: $(cat "$work/wrong.log")"

# 7. A DEST that holds something else is not overwritten.
mkdir -p "$work/busy" && echo keep > "$work/busy/file"
if RLFIT_DATA_UPSTREAM="file://$up" "$fetch" "$work/busy" 2> "$work/busy.log"; then
  fail "fetch into a non-empty foreign folder succeeded"
fi
[ "$(cat "$work/busy/file")" = keep ] || fail "the foreign folder was changed"

# 8. Interrupted mid-download (TERM to the whole process group, as Ctrl-C would): nothing is
#    left, neither DEST nor the temporary folder beside it. A git shim stalls the clone.
mkdir -p "$work/shim" "$work/int"
real_git=$(command -v git)
printf '#!/bin/sh\ncase "$1" in clone) sleep 30 ;; esac\nexec "%s" "$@"\n' "$real_git" \
  > "$work/shim/git"
chmod +x "$work/shim/git"
PATH="$work/shim:$PATH" RLFIT_DATA_UPSTREAM="file://$up" setsid "$fetch" "$work/int/lobot" \
  2> /dev/null &
pid=$!
for _ in $(seq 100); do
  [ -n "$(ls -A "$work/int")" ] && break
  sleep 0.1
done
[ -n "$(ls -A "$work/int")" ] || fail "the fetch never started its temporary folder"
kill -TERM -- "-$pid"
wait "$pid" 2> /dev/null && fail "the interrupted fetch exited 0"
[ -z "$(ls -A "$work/int")" ] || fail "an interrupted fetch left $(ls -A "$work/int")"

echo "fetch_test: OK"
