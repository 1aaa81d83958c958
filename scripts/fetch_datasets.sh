#!/usr/bin/env bash
# Downloads the public recordings (assets/ of samuelpmish/Lobot, MIT licence) into DEST in
# the layout rlfit expects (DEST/car_control, DEST/ball_trajectories, DEST/meshes, ...).
# Usage: scripts/fetch_datasets.sh [DEST]   (default: ../shared/datasets/lobot)
# Then point the tools at it with --data DEST or RLFIT_DATA=DEST. Needs git and network.
set -euo pipefail
dest="${1:-$(cd "$(dirname "$0")/.." && pwd)/../shared/datasets/lobot}"
if [ -d "$dest/car_control" ]; then
  echo "fetch_datasets: $dest already holds recordings; nothing to do" >&2
  exit 0
fi
command -v git >/dev/null || { echo "fetch_datasets: git is required" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
git clone --depth 1 --filter=blob:none --sparse https://github.com/samuelpmish/Lobot.git "$tmp/Lobot"
git -C "$tmp/Lobot" sparse-checkout set assets
mkdir -p "$dest"
cp -r "$tmp/Lobot/assets/." "$dest/"
[ -f "$tmp/Lobot/LICENSE" ] && cp "$tmp/Lobot/LICENSE" "$dest/LICENSE"
echo "fetch_datasets: recordings in $dest" >&2
