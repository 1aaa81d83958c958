#!/usr/bin/env bash
# Checks a report page as a person would see it: every image and relative link in
# OUT_DIR/index.html exists, headless chromium renders its first screen (1280x800) to a
# non-blank screenshot, and on a replay page (replay_summary.json beside it) that first
# screen holds the verdict (id="verdict") and the worst episodes (id="worst").
# Usage: scripts/check_index_page.sh OUT_DIR [SCREENSHOT.png]   (exit 0 = page is fine)
# CHECK_INDEX_LINKS_ONLY=1 checks the images, links and page order but renders nothing.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 OUT_DIR [SCREENSHOT.png]" >&2
  exit 2
fi
out_dir=$(cd "$1" && pwd)
index="$out_dir/index.html"
shot="${2:-${TMPDIR:-/tmp}/index_screenshot_$$.png}"
# The first screen a reader sees: a laptop-sized viewport, in CSS pixels.
view_w=1280
view_h=800
# A blank 1280x800 page compresses to about 5 kB; the replay page's first screen (title,
# verdict table, worst episodes) is over 100 kB. Anything under this is "nothing rendered".
min_shot_bytes=20000
replay_page=0
[ -f "$out_dir/replay_summary.json" ] && replay_page=1

[ -f "$index" ] || { echo "check_index_page: $index: no such file" >&2; exit 1; }

# 1. Every <img src> must be a relative path to an existing file (the page is offline);
#    every relative <a href> and #fragment must exist too. On a replay page the verdict
#    and the worst episodes come before any image, folded list or long table.
/usr/bin/python3 - "$index" "$replay_page" <<'EOF'
import os, sys
from html.parser import HTMLParser
from urllib.parse import unquote, urlparse

index, replay_page = sys.argv[1], sys.argv[2] == "1"
root = os.path.dirname(index)
problems = []
images = 0
ids = set()
fragments = []
first_seen = {}  # "img", "details", "verdict", "worst" -> order of first appearance
order = 0

class Links(HTMLParser):
    def handle_starttag(self, tag, attrs):
        global images, order
        order += 1
        a = dict(attrs)
        if a.get("id"):
            ids.add(a["id"])
            first_seen.setdefault(a["id"], order)
        if tag in ("img", "details", "ul", "ol"):
            first_seen.setdefault(tag, order)
        if tag == "img":
            images += 1
            src = a.get("src") or ""
            u = urlparse(src)
            if not src or u.scheme or u.netloc or src.startswith("/"):
                problems.append(f"<img src=\"{src}\"> is not a relative path")
            elif not os.path.isfile(os.path.join(root, unquote(u.path))):
                problems.append(f"<img src=\"{src}\"> points to a missing file")
        elif tag == "a" and a.get("href"):
            u = urlparse(a["href"])
            if u.scheme or u.netloc:
                return  # external link
            if not u.path:
                fragments.append(u.fragment)
            elif not os.path.exists(os.path.join(root, unquote(u.path))):
                problems.append(f"<a href=\"{a['href']}\"> points to a missing file")
        elif tag == "script":
            problems.append("the page uses <script>; it should need no JavaScript")

Links().feed(open(index, encoding="utf-8").read())
for f in fragments:
    if f and f not in ids:
        problems.append(f"<a href=\"#{f}\"> points to no element with that id")
if replay_page:
    for needed in ("verdict", "worst"):
        if needed not in first_seen:
            problems.append(f"no element with id=\"{needed}\" (a replay page opens with it)")
    if "verdict" in first_seen and "worst" in first_seen:
        for tag in ("img", "details", "ul", "ol"):
            if first_seen.get(tag, order + 1) < max(first_seen["verdict"], first_seen["worst"]):
                problems.append(f"a <{tag}> comes before the verdict and worst episodes")
for p in problems:
    print(f"check_index_page: {index}: {p}", file=sys.stderr)
if problems:
    sys.exit(1)
print(f"check_index_page: {images} images and all relative links present"
      + ("; verdict and worst episodes come first" if replay_page else ""))
EOF

# 2. Render it.
if [ "${CHECK_INDEX_LINKS_ONLY:-0}" = 1 ]; then
  echo "check_index_page: no screenshot (CHECK_INDEX_LINKS_ONLY=1)"
  exit 0
fi
chromium=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$chromium" ]; then
  echo "check_index_page: chromium is not installed (Debian: apt-get install chromium)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run_chromium() {  # run_chromium LOG ARGS... ; the flags this machine needs headless
  local log=$1
  shift
  rm -rf "$work/profile"
  timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic \
    --no-first-run --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" "$@" 2>"$log"
}

# 2a. Where the verdict lands: a copy of the page (in a temporary folder, with a <base> back
#     to OUT_DIR so images load) gets a script that writes the layout into the DOM, which
#     --dump-dom prints. Heights are compared with the 800 px screen the screenshot shows.
if [ "$replay_page" = 1 ]; then
  /usr/bin/python3 - "$index" "$work/layout.html" <<'EOF'
import sys
from urllib.request import pathname2url
import os
index, copy = sys.argv[1], sys.argv[2]
page = open(index, encoding="utf-8").read()
base = "file://" + pathname2url(os.path.dirname(index) + "/")
probe = """<script>
function box(sel) {
  const e = document.querySelector(sel);
  if (!e) return "none";
  const b = e.getBoundingClientRect();
  return [b.top, b.bottom, b.left, b.right].map(Math.round).join(",");
}
document.body.setAttribute("data-layout", [
  "verdict=" + box("#verdict"), "worst=" + box("#worst"),
  "verdict_table=" + box("#verdict table"), "worst_table=" + box("#worst table"),
  "scroll_width=" + document.documentElement.scrollWidth,
  "client_width=" + document.documentElement.clientWidth].join(";"));
</script>"""
page = page.replace("<head>", f"<head>\n<base href=\"{base}\">", 1)
page = page.replace("</body>", probe + "\n</body>", 1)
open(copy, "w", encoding="utf-8").write(page)
EOF
  if ! run_chromium "$work/dom.log" --window-size="$view_w,$view_h" --dump-dom \
      "file://$work/layout.html" >"$work/dom.html"; then
    echo "check_index_page: chromium failed to lay out $index:" >&2
    tail -n 5 "$work/dom.log" >&2
    exit 1
  fi
  /usr/bin/python3 - "$work/dom.html" "$index" "$view_w" "$view_h" <<'EOF'
import re, sys
dom, index, view_w, view_h = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
m = re.search(r'data-layout="([^"]*)"', open(dom, encoding="utf-8").read())
if not m:
    sys.exit(f"check_index_page: {index}: the layout probe did not run")
layout = dict(kv.split("=", 1) for kv in m.group(1).split(";"))
problems = []
boxes = {}
for name in ("verdict", "worst", "verdict_table", "worst_table"):
    if layout.get(name, "none") == "none":
        if name != "worst_table":  # no episode scored: the block says n/a, with no table
            problems.append(f"no {name.replace('_', ' ')} on the page")
        continue
    boxes[name] = [int(x) for x in layout[name].split(",")]  # top, bottom, left, right
for name in ("verdict", "worst"):
    if name in boxes and boxes[name][1] > view_h:
        problems.append(f"the {name} block ends {boxes[name][1]} px down, below the first "
                        f"screen ({view_w}x{view_h})")
for table, block in (("verdict_table", "verdict"), ("worst_table", "worst")):
    if table in boxes and block in boxes and boxes[table][3] > boxes[block][3] + 1:
        problems.append(f"the {block} table sticks out of its box "
                        f"({boxes[table][3]} px > {boxes[block][3]} px)")
if int(layout["scroll_width"]) > int(layout["client_width"]):
    problems.append(f"the page scrolls sideways at {view_w} px "
                    f"({layout['scroll_width']} > {layout['client_width']} px)")
for p in problems:
    print(f"check_index_page: {index}: {p}", file=sys.stderr)
if problems:
    sys.exit(1)
print(f"check_index_page: first screen holds the verdict (ends at {boxes['verdict'][1]} px) "
      f"and the worst episodes (ends at {boxes['worst'][1]} px) of {view_h}")
EOF
fi

# 2b. The first screen as a person sees it.
rm -f "$shot"
if ! run_chromium "$work/shot.log" --screenshot="$shot" --window-size="$view_w,$view_h" \
    "file://$index" >/dev/null; then
  echo "check_index_page: chromium failed to render $index:" >&2
  tail -n 5 "$work/shot.log" >&2
  exit 1
fi
size=$(stat -c %s "$shot" 2>/dev/null || echo 0)
if [ "$size" -lt "$min_shot_bytes" ]; then
  echo "check_index_page: screenshot $shot is empty or blank ($size bytes)" >&2
  exit 1
fi
echo "check_index_page: first screen $shot ($size bytes, ${view_w}x${view_h})"
