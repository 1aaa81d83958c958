#!/usr/bin/env bash
# Downloads the public recordings (assets/ of samuelpmish/Lobot, MIT licence) into DEST in
# the layout rlfit expects (DEST/car_control, DEST/ball_trajectories, DEST/meshes, ...).
# Usage: scripts/fetch_datasets.sh [DEST]
#   DEST defaults to data/lobot in the checkout this script belongs to (git-ignored; the tools
#   look there when run from the checkout or its build tree), or, for an installed copy of the
#   script, ${XDG_DATA_HOME:-~/.local/share}/rlfit/lobot (where installed tools look).
#   RLFIT_DATA_UPSTREAM overrides the repository (a URL, file://... or a local path).
# Atomic: the download goes to a temporary folder beside DEST and is renamed into place once
# verified, so an interrupted or failed fetch leaves no DEST behind. Re-running is a no-op.
# Beside the data goes the dataset manifest the tools read (DEST/rlfit_dataset.json, a copy of
# datasets/manifests/lobot.json: each model's default recordings, the shipped predictions, the
# slices' clock, the folder whose handbrake is not recorded; README "Dataset manifests").
# Needs git (Debian: apt-get install git) and network access to the upstream.
set -euo pipefail

upstream="${RLFIT_DATA_UPSTREAM:-https://github.com/samuelpmish/Lobot.git}"
die() { echo "fetch_datasets: error: $*" >&2; exit 1; }
# The manifest shipped with this script: scripts/../datasets/manifests in a checkout (the build
# tree's share/rlfit/scripts links there), share/rlfit/datasets/manifests when installed.
manifest="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)/datasets/manifests/lobot.json"

if [ $# -gt 1 ] || [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  echo "usage: $0 [DEST]" >&2
  exit 2
fi
if [ $# -eq 1 ]; then
  [ -n "$1" ] || die "DEST is empty"
  dest="$1"
else
  # A checkout has CMakeLists.txt and src/ beside scripts/ (symlinks resolved: the build tree
  # links share/rlfit/scripts to the checkout's scripts/).
  project="$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)"
  if [ -f "$project/CMakeLists.txt" ] && [ -d "$project/src" ]; then
    dest="$project/data/lobot"
  else
    data_home="${XDG_DATA_HOME:-}"
    [[ "$data_home" == /* ]] || data_home="${HOME:?HOME is not set}/.local/share"
    dest="$data_home/rlfit/lobot"
  fi
fi

# The layout every model needs; a folder that has it is a finished fetch.
complete() {
  [ -d "$1/car_control" ] && [ -d "$1/ball_trajectories" ] && [ -f "$1/meshes/pitch.dat" ]
}

if complete "$dest"; then
  echo "fetch_datasets: $dest already holds the recordings; nothing to do" >&2
  exit 0
fi
if [ -e "$dest" ] && ! { [ -d "$dest" ] && [ -z "$(ls -A "$dest")" ]; }; then
  die "$dest exists but does not hold the recordings (car_control/, ball_trajectories/, meshes/pitch.dat); remove it or choose another DEST"
fi
command -v git >/dev/null || die "git is required (Debian: apt-get install git)"

parent="$(dirname "$dest")"
made_parent=""
[ -d "$parent" ] || made_parent="$parent"
mkdir -p "$parent" || die "cannot create $parent"
tmp="$(mktemp -d "$parent/.$(basename "$dest").fetch.XXXXXX")" || die "cannot write in $parent"
# On any exit: the temporary folder goes, and so does a parent this run created if it stayed
# empty (a failed fetch leaves nothing behind).
trap 'rm -rf "$tmp"; [ -z "$made_parent" ] || rmdir "$made_parent" 2>/dev/null || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "fetch_datasets: downloading assets/ of $upstream into $dest" >&2
# Sparse, blob-less, shallow: only assets/ (and the top-level LICENSE) is downloaded.
if ! git clone --quiet --depth 1 --filter=blob:none --sparse "$upstream" "$tmp/repo" ||
   ! git -C "$tmp/repo" sparse-checkout set assets; then
  case "$upstream" in
    file://*|/*|./*|../*)
      # A local repository may refuse the partial-clone options: a full clone is cheap here.
      echo "fetch_datasets: sparse clone failed; trying a full clone of the local $upstream" >&2
      rm -rf "$tmp/repo"
      git clone --quiet "$upstream" "$tmp/repo" || die "cannot clone $upstream"
      ;;
    *)
      die "cannot clone $upstream (network? without one, pass --data DIR to the tools or set RLFIT_DATA)"
      ;;
  esac
fi

assets="$tmp/repo/assets"
complete "$assets" ||
  die "$upstream has no assets/ with car_control/, ball_trajectories/ and meshes/pitch.dat (not the Lobot repository?)"
if [ -f "$tmp/repo/LICENSE" ]; then
  cp "$tmp/repo/LICENSE" "$assets/LICENSE"
fi
[ -f "$manifest" ] || die "the dataset manifest $manifest is missing (a damaged install?)"
cp "$manifest" "$assets/rlfit_dataset.json"
revision="$(git -C "$tmp/repo" rev-parse HEAD 2>/dev/null || echo unknown)"
printf 'upstream: %s\nrevision: %s\n' "$upstream" "$revision" > "$assets/FETCHED_FROM"

# Into place: one rename (same filesystem); an empty DEST folder is replaced.
[ -d "$dest" ] && rmdir "$dest"
mv -T "$assets" "$dest" || die "cannot move the download into $dest"
echo "fetch_datasets: recordings in $dest" >&2
