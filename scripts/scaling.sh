#!/usr/bin/env bash
# Scaling of replay and fit with the amount of data: runs `rlsim replay MODEL` and `rlfit fit
# MODEL` on 1x, 2x, 4x, 8x the model's recordings (the same episodes repeated: k links to the
# recordings folder in a temporary folder, removed at the end) and prints a markdown table of
# wall time, CPU time and peak memory (/usr/bin/time), with the time and memory per multiple.
# Linear growth shows as constant "per x" columns (the fixed start-up cost aside).
#
#   scripts/scaling.sh [--model ball] [--build build] [--no-fit] [--first N] [MULTIPLES...]
#
# --first N: the first N episodes of the folder as 1x (a smaller base for the slower fits).
# Recordings: $RLFIT_DATA, else ../shared/datasets/lobot. Runs one command at a time.
set -euo pipefail
model=ball
build=build
fit=1
first=0
multiples=()
while [ $# -gt 0 ]; do
  case "$1" in
    --model) model=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --no-fit) fit=0; shift ;;
    --first) first=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) multiples+=("$1"); shift ;;
  esac
done
[ ${#multiples[@]} -gt 0 ] || multiples=(1 2 4 8)
data=${RLFIT_DATA:-../shared/datasets/lobot}
case "$model" in
  ball) folder=ball_trajectories ;;
  aerial) folder=car_control/aerial ;;
  ground) folder=car_control/ground_driving_no_handbrake ;;
  *) echo "scaling: unknown model $model" >&2; exit 2 ;;
esac
src=$(cd "$data/$folder" && pwd)
[ -x "$build/rlsim" ] && [ -x "$build/rlfit" ] || { echo "scaling: build $build/rlsim and $build/rlfit first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "scaling: needs /usr/bin/time (Debian package time)" >&2; exit 2; }
tmp=$(mktemp -d /tmp/rlfit_scaling.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
if [ "$first" -gt 0 ]; then  # a folder of links to the first N episodes and their predictions
  mkdir "$tmp/base"
  find "$src" -maxdepth 1 -name 'episode_*.csv' | sort | head -n "$first" | while read -r f; do
    ln -s "$f" "$tmp/base/"
    p="$src/prediction_${f##*/episode_}"
    [ -e "$p" ] && ln -s "$p" "$tmp/base/"
  done
  src=$tmp/base
fi
episodes=$(find "$src" -maxdepth 1 -name 'episode_*.csv' | wc -l)

# measure NAME CMD...: appends "wall user peak_mb" of CMD to $tmp/NAME.
measure() {
  local name=$1; shift
  /usr/bin/time -f '%e %U %M' -o "$tmp/$name.time" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" ||
    { echo "scaling: failed: $*" >&2; tail -3 "$tmp/$name.err" >&2; exit 1; }
  awk '{printf "%.2f %.2f %.0f\n", $1, $2, $3 / 1024}' "$tmp/$name.time"
}

echo "| data | episodes | replay wall s | replay user s | replay peak MB | replay s per x | replay MB per x |$( [ $fit = 1 ] && echo ' fit wall s | fit user s | fit peak MB | fit s per x | fit MB per x |')"
echo "|---|---|---|---|---|---|---|$( [ $fit = 1 ] && echo '---|---|---|---|---|')"
for k in "${multiples[@]}"; do
  paths=()
  for i in $(seq 1 "$k"); do
    ln -s "$src" "$tmp/copy${k}_$i"
    paths+=("$tmp/copy${k}_$i")
  done
  read -r rw ru rm < <(measure "replay$k" "$build/rlsim" replay "$model" --data "$data" "${paths[@]}")
  row="| ${k}x | $((k * episodes)) | $rw | $ru | $rm | $(awk -v a="$rw" -v k="$k" 'BEGIN{printf "%.2f", a / k}') | $(awk -v a="$rm" -v k="$k" 'BEGIN{printf "%.0f", a / k}') |"
  if [ $fit = 1 ]; then
    read -r fw fu fm < <(measure "fit$k" "$build/rlfit" fit "$model" --quiet --data "$data" "${paths[@]}")
    row="$row $fw | $fu | $fm | $(awk -v a="$fw" -v k="$k" 'BEGIN{printf "%.2f", a / k}') | $(awk -v a="$fm" -v k="$k" 'BEGIN{printf "%.0f", a / k}') |"
  fi
  echo "$row"
done
