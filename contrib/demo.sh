#!/usr/bin/env bash
# The demo: installs what is missing, builds, starts the bundled gallery on a free port of 127.0.0.1 and
# syncs it into ./demo/emoji, so you can watch the log of memory, disk and network hits.
#   contrib/demo.sh            # cold sync, then a warm one (all disk hits)
#   DEMO_DIR=/tmp/emoji contrib/demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
contrib/install-deps.sh
swift build -c release --product emojiart-sync
swift build -c release --product emojiart-gallery
bin=$(swift build -c release --show-bin-path)
dir=${DEMO_DIR:-$PWD/demo/emoji}
mkdir -p "$dir"

fifo=$(mktemp -u)
mkfifo "$fifo"
"$bin/emojiart-gallery" --host 127.0.0.1 --port 0 >"$fifo" 2>/dev/null &
gallery=$!
trap 'kill $gallery 2>/dev/null || true; rm -f "$fifo"' EXIT
exec 3<"$fifo"
read -r url <&3
echo "demo: gallery at $url, syncing into $dir" >&2

status=0
echo "demo: --- first run: network and memory hits ---" >&2
"$bin/emojiart-sync" --dir "$dir" --server "$url" --once || status=$?
echo "demo: exit status $status (2 = partial: the book's gallery has error items for N % 10 == 0)" >&2
echo "demo: --- second run: everything from disk ---" >&2
"$bin/emojiart-sync" --dir "$dir" --server "$url" --once || status=$?
echo "demo: exit status $status" >&2
echo "demo: $(ls "$dir"/*.png | wc -l) images in $dir; log at $dir/.emojiart-sync/sync.log" >&2
