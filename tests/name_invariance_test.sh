#!/usr/bin/env bash
# ctest "name_invariance": a few recordings of every model's default data, replayed from their
# own paths, from copies under other names in another folder (every extension .csv), and
# rewritten into the named-column format (scripts/to_named_csv.py: columns shuffled, an unknown
# column added, no handbrake column), give the same per-episode figures: nothing depends on a
# file's or folder's name. The Lobot layout's facts reach the copies as anyone would give them:
# a dataset manifest beside them (the slices' clock origins) and --reference (the shipped
# predictions, under the copies' names); the powerslide copies' unrecorded handbrake is measured
# (no press while the car slides), the named ones' inferred (no column).
# Usage: tests/name_invariance_test.sh PATH/TO/rlsim   (exit 77 = skipped: no datasets)
set -euo pipefail

rlsim=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$(dirname "$0")/.." && pwd)
data=${RLFIT_DATA:-$src/../shared/datasets/lobot}
[ -d "$data" ] || data="$(dirname "$rlsim")/share/rlfit/data/lobot"
if [ ! -f "$data/meshes/pitch.dat" ] || [ ! -d "$data/car_control/aerial" ]; then
  echo "name_invariance_test: SKIP: no datasets under $data"
  exit 77
fi
data=$(cd "$data" && pwd)
python=/usr/bin/python3
[ -x "$python" ] || python=python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "name_invariance_test: FAIL: $*" >&2; exit 1; }

# model | clock origin rows per file ("-" for none) | files under the datasets root
cases=(
  "aerial|0 1500|car_control/aerial/episode_00.csv car_control/aerial/episode_05.csv"
  "ground|600 3900 -|car_control/ground_driving_no_handbrake/episode_02.csv car_control/ground_driving_no_handbrake/episode_13.csv car_control/ground_driving_no_handbrake/spiral_backward_025.txt"
  "jump|-|car_control/jumps.txt"
  "wall|1200 2700|car_control/wall_driving/episode_04.csv car_control/wall_driving/episode_09.csv"
  "powerslide|1200 2700|car_control/ground_driving_handbrake/episode_04.csv car_control/ground_driving_handbrake/episode_09.csv"
  "ball|- -|ball_trajectories/episode_000004.csv ball_trajectories/episode_000009.csv"
  "car|-|car_control/data.txt"
)
# Columns of the named rewrite: shuffled, with a column the reader does not know (t is left
# out of untimed car recordings).
car_columns="steer,throttle,t,yaw,pitch,roll,z,x,y,vz,vx,vy,wz,wy,wx,boost,jump,input_roll,input_yaw,input_pitch,on_ground,jumped,double_jumped,boost_amount,supersonic,handbrake,comment"
ball_columns="wz,wy,wx,vz,vy,vx,z,y,x,t,comment"

# The per-episode figures of a replay: every number of its episodes' error records and
# checks, in episode order (names, paths and splits left out: they follow the names).
figures() {
  "$python" - "$1/replay_summary.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
order = {e["name"]: i for i, e in enumerate(j["episodes"])}
rows = []
for r in j["errors"]:
    if r["episode"] is None:
        continue
    rows.append((order[r["episode"]], r["mode"], r["quantity"], str(r["horizon_s"]),
                 r["n"], r["diverged"], r["median"], r["p90"], r["max"]))
for row in sorted(rows):
    print(*row)
for i, e in enumerate(j["episodes"]):
    checks = {k.split(" (")[0]: v for k, v in (e.get("checks") or {}).items()}
    print(i, e["rows"], e["rows_scored"], json.dumps(e["rows_left_out"], sort_keys=True),
          e["has_reference"], json.dumps(checks, sort_keys=True))
PY
}

for case in "${cases[@]}"; do
  IFS='|' read -r model origins files <<< "$case"
  read -r -a origin_list <<< "$origins"
  read -r -a file_list <<< "$files"
  renamed="$work/$model/renamed"; named="$work/$model/named"; refs="$work/$model/refs"
  mkdir -p "$renamed" "$named" "$refs"
  originals=()
  slices=""
  i=0
  for f in "${file_list[@]}"; do
    originals+=("$data/$f")
    # Another name, another folder, always .csv; sorted as the originals are.
    new="$i-$(printf '%s' "$f" | cksum | cut -d' ' -f1).csv"
    cp "$data/$f" "$renamed/$new"
    if [ "$model" = ball ]; then columns=$ball_columns; else columns=$car_columns; fi
    "$python" "$src/scripts/to_named_csv.py" "$data/$f" "$named/$new" --no-handbrake \
      --columns "$columns" || fail "$f: the named rewrite failed"
    prediction="$(dirname "$data/$f")/prediction_${f##*episode_}"
    [ -f "$prediction" ] && cp "$prediction" "$refs/$new"
    origin=${origin_list[$i]:-"-"}
    if [ "$origin" != "-" ]; then
      slices+="${slices:+,}{\"recordings\": \"$new\", \"origin_rows\": $origin}"
    fi
    i=$((i + 1))
  done
  for dir in "$renamed" "$named"; do
    printf '{"schema_version": 1, "clock_slices": [%s]}\n' "$slices" > "$dir/rlfit_dataset.json"
  done
  reference=()
  [ -n "$(ls -A "$refs")" ] && reference=(--reference "$refs")
  "$rlsim" replay "$model" "${originals[@]}" --data "$data" --out "$work/$model/out_orig" \
    --quiet > "$work/$model/orig.txt" 2> "$work/$model/orig.err" ||
    fail "$model: replay of the originals: $(cat "$work/$model/orig.err")"
  for variant in renamed named; do
    "$rlsim" replay "$model" "$work/$model/$variant" "${reference[@]}" --data "$data" \
      --out "$work/$model/out_$variant" --quiet > "$work/$model/$variant.txt" \
      2> "$work/$model/$variant.err" ||
      fail "$model: replay of the $variant copies: $(cat "$work/$model/$variant.err")"
    figures "$work/$model/out_orig" > "$work/$model/orig.fig"
    figures "$work/$model/out_$variant" > "$work/$model/$variant.fig"
    [ -s "$work/$model/orig.fig" ] || fail "$model: no figures"
    if ! cmp -s "$work/$model/orig.fig" "$work/$model/$variant.fig"; then
      diff "$work/$model/orig.fig" "$work/$model/$variant.fig" | head -20 >&2
      fail "$model: the $variant copies' figures differ from the originals'"
    fi
  done
  grep -q 'columns not read (unknown names): ."comment' "$work/$model/out_named/replay_summary.json" ||
    fail "$model: the named copies' unknown column is not named"
  echo "name_invariance_test: $model: $(grep -c . "$work/$model/orig.fig") figure lines equal" \
       "($i file(s): own names, renamed, named format)"
done
echo "name_invariance_test: OK"
