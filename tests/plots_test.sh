#!/usr/bin/env bash
# ctest "plots": the replay report page (scripts/plot_replay.py) on generated schema-2
# summaries (car, ball-like, sparse) and on `rlsim replay --plots` over the recorded aerial
# episodes; plot_fit.py on a committed coefficients file. Every page goes through
# scripts/check_index_page.sh (links, images, the verdict on the first 1280x800 screen).
# Usage: tests/plots_test.sh PATH/TO/rlsim
set -euo pipefail

rlsim=$1
src=$(cd "$(dirname "$0")/.." && pwd)
data=${RLFIT_DATA:-$src/../shared/datasets/lobot}
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "plots_test: FAIL: $*" >&2; exit 1; }

# The page check; without chromium it still checks images, links and page order.
check_page() {
  if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then
    "$src/scripts/check_index_page.sh" "$1" "$work/shot.png"
  else
    echo "plots_test: chromium missing: checking links and page order only"
    CHECK_INDEX_LINKS_ONLY=1 "$src/scripts/check_index_page.sh" "$1"
  fi
}
# offset PATTERN FILE: byte offset of the first match (grep -b), or a large number.
offset() { { grep -b -o -m1 -- "$1" "$2" || echo 999999999; } | head -n1 | cut -d: -f1; }

# 1. Generated summaries in schema 2.
for kind in car ball sparse; do
  dir="$work/fixture $kind"  # a space, as the launcher must cope with one
  "$python" "$src/tests/fixtures/replay_v2/make_fixture.py" "$dir" --kind "$kind" > /dev/null
  "$src/scripts/plot_replay.py" "$dir" > "$work/stdout.txt"
  grep -q "plot_replay.py: wrote" "$work/stdout.txt" || fail "$kind: no report line"
  page="$dir/index.html"
  [ -s "$dir/plots/error_vs_horizon.png" ] || fail "$kind: no error-vs-horizon figure"
  episodes=$(ls "$dir"/episode_*.csv | wc -l)
  figures=$(ls "$dir"/plots/trajectory_*.png | wc -l)
  expected=$(( episodes < 8 ? episodes : 8 ))
  [ "$figures" -eq "$expected" ] || fail "$kind: $figures episode figures, expected $expected"
  for csv in "$dir"/episode_*.csv; do
    grep -q "href=\"$(basename "$csv")\"" "$page" || fail "$kind: no link to $(basename "$csv")"
  done
  # The worst episodes each link to their figure (check_index_page checks the anchors).
  worst_links=$(sed -n '/<div id="worst">/,/<\/div>/p' "$page" | grep -c 'href="#fig-' || true)
  [ "$worst_links" -ge 1 ] || fail "$kind: the worst episodes link to no figure"
  # File paths only after the results.
  [ "$(offset '/data/lobot/' "$page")" -gt "$(offset 'id="tables"' "$page")" ] ||
    fail "$kind: a file path comes before the result tables"
  check_page "$dir"
done
car="$work/fixture car/index.html"
ball="$work/fixture ball/index.html"
sparse="$work/fixture sparse/index.html"
grep -q "Verdict on the 3 held-out episodes" "$car" || fail "car: verdict not on held-out"
grep -q "orientation error" "$car" || fail "car: no orientation in the verdict"
grep -q "Verdict on the 52 held-out episodes" "$ball" || fail "ball: verdict not on held-out"
grep -q "worse at 0.5 s and 1 s" "$ball" || fail "ball: the verdict sentence misses the losses"
grep -q 'id="split-heldout"' "$ball" && grep -q 'id="split-train"' "$ball" ||
  fail "ball: held-out and training not in separate tables"
grep -q "<details><summary>206 training episodes" "$ball" || fail "ball: long list not folded"
grep -q "none is held out, so these errors are in-sample" "$sparse" ||
  fail "sparse: the verdict does not say it is in-sample"
grep -q "No earlier model to compare against" "$sparse" || fail "sparse: no-reference sentence"
grep -q "n/a" "$sparse" || fail "sparse: null statistics not shown as n/a"

# 2. The page check fails when the verdict is pushed off the first screen or an image
#    comes before it.
bad="$work/bad page"
cp -r "$work/fixture sparse" "$bad"
sed -i 's|<div id="verdict">|<div style="height:700px"></div><div id="verdict">|' "$bad/index.html"
if command -v chromium >/dev/null && "$src/scripts/check_index_page.sh" "$bad" \
    "$work/bad.png" > /dev/null 2>&1; then
  fail "check_index_page.sh accepted a verdict below the first screen"
fi
sed -i 's|<div style="height:700px"></div>|<img src="plots/error_vs_horizon.png" alt="">|' \
  "$bad/index.html"
if CHECK_INDEX_LINKS_ONLY=1 "$src/scripts/check_index_page.sh" "$bad" > /dev/null 2>&1; then
  fail "check_index_page.sh accepted an image before the verdict"
fi

# 3. No episode at all (every file skipped): the page still renders, every number n/a.
empty="$work/empty"
mkdir "$empty"
cat > "$empty/replay_summary.json" <<'JSON'
{"schema_version": 2, "tool": "rlsim replay", "model": "ball", "git_revision": "x",
 "units": {}, "quantities": ["dx", "dv", "domega"], "horizons_s": [0.5, 1.0],
 "window_s": 0.5, "curve_step_s": 0.1, "coefficients_source": "seed notes",
 "reference": {"kind": "seed_coefficients", "label": "seed-note coefficients"},
 "options": {}, "skipped": [{"path": "/x/episode_00.csv", "reason": "no covered row"}],
 "episodes": [],
 "errors": [{"episode": null, "split": "all", "mode": "open_loop", "quantity": "dx",
             "horizon_s": 0.5, "n": 0, "median": null, "p90": null, "max": null}],
 "curve": []}
JSON
"$src/scripts/plot_replay.py" "$empty" > /dev/null
grep -q "nothing was scored" "$empty/index.html" || fail "empty: the verdict does not say so"
check_page "$empty"

# 3b. Files --keep-going could not read, and the reader's notes (a cut at dropped frames): the
#     page names each with its reason, its first line links to the unreadable ones.
kept="$work/kept going"
cp -r "$work/fixture sparse" "$kept"
"$python" - "$kept/replay_summary.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
j["unreadable"] = [{"path": "/x/bad.csv", "reason": "row 3, column 1: 'abc' is not a number"},
                   {"path": "/x/gone.csv", "reason": "no such file or folder"}]
j["notes"] = [{"path": "/x/ball.csv", "note": "cut at row 338: time jumps by 0.0791 s"}]
json.dump(j, open(sys.argv[1], "w"))
PY
"$src/scripts/plot_replay.py" "$kept" > /dev/null
for text in "2 files could not be read" "/x/bad.csv" "is not a number" "/x/gone.csv" \
            "cut at row 338: time jumps by 0.0791 s" 'href="#unreadable"'; do
  grep -qF -- "$text" "$kept/index.html" || fail "kept going: the page lacks: $text"
done
link=$(offset 'href="#unreadable"' "$kept/index.html")
[ "$link" -lt "$(offset 'id="verdict"' "$kept/index.html")" ] ||
  fail "kept going: the first line does not link to the unreadable files"
check_page "$kept"

# 4. A schema-1 summary is refused with one line and exit status 2.
old="$work/schema1"
mkdir "$old"
echo '{"schema_version": 1, "model": "aerial"}' > "$old/replay_summary.json"
status=0
"$src/scripts/plot_replay.py" "$old" > /dev/null 2> "$work/err.txt" || status=$?
[ "$status" -eq 2 ] || fail "schema 1: exit status $status, expected 2"
[ "$(wc -l < "$work/err.txt")" -eq 1 ] && grep -q "schema_version 1" "$work/err.txt" ||
  fail "schema 1: expected one error line naming the version, got: $(cat "$work/err.txt")"

# 5. plot_fit.py on a committed coefficients file, with and without std_errors.
"$python" - "$src/results/aerial/coeffs.json" "$work" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c.pop("std_errors", None)
json.dump(c, open(sys.argv[2] + "/no_se.json", "w"))
c["coefficients"] = {k: v * 1.05 for k, v in c["coefficients"].items()}
c["std_errors"] = {k: abs(v) * 0.01 for k, v in c["coefficients"].items()}
json.dump(c, open(sys.argv[2] + "/with_se.json", "w"))
PY
for name in no_se with_se; do
  "$src/scripts/plot_fit.py" "$work/$name.json" "$work/fit_$name" > /dev/null
  [ -s "$work/fit_$name/coefficients.png" ] || fail "plot_fit.py drew nothing for $name"
  CHECK_INDEX_LINKS_ONLY=1 "$src/scripts/check_index_page.sh" "$work/fit_$name" > /dev/null
done
grep -q "std error" "$work/fit_with_se/index.html" || fail "std errors not shown"
if grep -q "std error" "$work/fit_no_se/index.html"; then fail "std error column without data"; fi

# 6. The page's fuzz target, briefly (scripts/fuzz.sh runs it longer): file and episode names
#    full of markup, every page checked by Python's HTML parser (fuzz/report_page_fuzz.py).
"$python" "$src/fuzz/report_page_fuzz.py" --runs 40 --seed 1 > /dev/null ||
  fail "report_page_fuzz.py found a page that breaks (see above)"

# 7. rlsim replay --plots on the recorded aerial episodes.
if [ ! -d "$data/car_control/aerial" ]; then
  echo "plots_test: OK (rlsim part skipped: no aerial recordings under $data)"
  exit 0
fi
if "$rlsim" replay aerial --data "$data" --plots --quiet > /dev/null 2>&1; then
  fail "--plots without --out was accepted"
fi
run="$work/replay dir"
"$rlsim" replay aerial --data "$data" --out "$run" --plots --quiet > "$work/stdout.txt"
for f in index.html summary.txt replay_summary.json plots/error_vs_horizon.png; do
  [ -s "$run/$f" ] || fail "$run/$f missing or empty"
done
episodes=$(ls "$run"/*.csv | wc -l)
figures=$(ls "$run"/plots/trajectory_*.png | wc -l)
[ "$episodes" -gt 8 ] || fail "expected more than 8 aerial episodes, found $episodes"
[ "$figures" -eq 8 ] || fail "expected 8 episode figures by default, found $figures"
for csv in "$run"/*.csv; do
  grep -q "href=\"$(basename "$csv")\"" "$run/index.html" || fail "index.html lacks a link to $csv"
done
grep -q "plot_replay.py: wrote" "$work/stdout.txt" || fail "no report line from the script"
check_page "$run"
one="$work/one"
"$rlsim" replay aerial car_control/aerial/episode_00.csv --data "$data" --out "$one" --plots \
  --quiet > /dev/null
[ "$(ls "$one"/plots/trajectory_*.png | wc -l)" -eq 1 ] || fail "one episode, not one figure"
check_page "$one"

# 8. A recording whose name is markup (issue 34): the page shows the name as text, and no
#    attribute or element comes from it.
hostile="$work/hostile"
mkdir "$hostile"
name='episode_x" onmouseover="alert(1)" y="<b>.csv'
cp "$data/car_control/aerial/episode_00.csv" "$hostile/$name"
"$rlsim" replay aerial "$hostile/$name" --data "$data" --out "$work/hostile out" --plots \
  --quiet > /dev/null
"$python" - "$work/hostile out/index.html" "$name" <<'PY' || fail "the hostile name reached the markup"
import html.parser, sys
page = open(sys.argv[1], encoding="utf-8").read()
allowed = {"lang", "charset", "href", "id", "class", "src", "alt", "colspan", "rowspan"}
class P(html.parser.HTMLParser):
    text, bad = [], []
    def handle_starttag(self, tag, attrs):
        self.bad += [f"<{tag} {k}=...>" for k, _ in attrs if k not in allowed]
    def handle_data(self, d):
        self.text.append(d)
p = P()
p.feed(page)
if p.bad:
    sys.exit(f"attributes from the name: {p.bad}")
if sys.argv[2] not in "".join(p.text):
    sys.exit("the name is not shown as text")
PY
check_page "$work/hostile out"

echo "plots_test: OK"
