#!/usr/bin/env bash
# Checks a report page as a person would see it: every image and relative link in
# OUT_DIR/index.html exists, and headless chromium renders it to a non-blank screenshot.
# Usage: scripts/check_index_page.sh OUT_DIR [SCREENSHOT.png]   (exit 0 = page is fine)
# CHECK_INDEX_LINKS_ONLY=1 checks the images and links but takes no screenshot.
set -euo pipefail

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: $0 OUT_DIR [SCREENSHOT.png]" >&2
  exit 2
fi
out_dir=$(cd "$1" && pwd)
index="$out_dir/index.html"
shot="${2:-${TMPDIR:-/tmp}/index_screenshot_$$.png}"
# A blank 1280x2000 page compresses to about 12 kB; the replay page with its figures is
# several hundred kB. Anything under this is taken as "nothing rendered".
min_shot_bytes=30000

[ -f "$index" ] || { echo "check_index_page: $index: no such file" >&2; exit 1; }

# 1. Every <img src> must be a relative path to an existing file (the page is offline);
#    every relative <a href> must exist too.
/usr/bin/python3 - "$index" <<'EOF'
import os, sys
from html.parser import HTMLParser
from urllib.parse import unquote, urlparse

index = sys.argv[1]
root = os.path.dirname(index)
problems = []
images = 0

class Links(HTMLParser):
    def handle_starttag(self, tag, attrs):
        global images
        a = dict(attrs)
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
            if u.scheme or u.netloc or not u.path:
                return  # fragment or external link
            if not os.path.exists(os.path.join(root, unquote(u.path))):
                problems.append(f"<a href=\"{a['href']}\"> points to a missing file")
        elif tag == "script":
            problems.append("the page uses <script>; it should need no JavaScript")

Links().feed(open(index, encoding="utf-8").read())
for p in problems:
    print(f"check_index_page: {index}: {p}", file=sys.stderr)
if problems:
    sys.exit(1)
print(f"check_index_page: {images} images and all relative links present")
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
profile=$(mktemp -d)
log=$(mktemp)
trap 'rm -rf "$profile" "$log"' EXIT
rm -f "$shot"
if ! timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --disable-quic \
    --no-first-run --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --screenshot="$shot" --window-size=1280,2000 \
    "file://$index" >"$log" 2>&1; then
  echo "check_index_page: chromium failed to render $index:" >&2
  tail -n 5 "$log" >&2
  exit 1
fi
size=$(stat -c %s "$shot" 2>/dev/null || echo 0)
if [ "$size" -lt "$min_shot_bytes" ]; then
  echo "check_index_page: screenshot $shot is empty or blank ($size bytes)" >&2
  exit 1
fi
echo "check_index_page: screenshot $shot ($size bytes)"
