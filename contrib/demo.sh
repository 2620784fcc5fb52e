#!/usr/bin/env bash
# The demo: installs what is missing, builds, starts the bundled gallery on a free port of 127.0.0.1 and
# runs the agent against it in ./demo/emoji (DEMO_DIR overrides), so you watch the log of hits:
# a cold sync (network and memory hits), files deleted and damaged behind its back (repairs),
# a memory purge, then the next accesses from disk, and a graceful stop.
# Needs a Swift 6.2 toolchain on PATH (contrib/check-swift.sh says where one comes from when it is missing);
# installs the Debian packages it builds against when they are missing, with sudo when not root
# (INSTALL_DEPS=no lists them and stops instead: contrib/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
contrib/check-swift.sh
contrib/install-deps.sh
# A debug build: the demo's 29 assets need no optimiser, the first build is minutes shorter than a release
# one, and contrib/test.sh reuses it. (`make` builds the release binaries you install.)
swift build    # both binaries, in one invocation (each invocation plans the build anew)
bin=$(swift build --show-bin-path)
dir=${DEMO_DIR:-$PWD/demo/emoji}
mkdir -p "$dir"
say() { printf '\n\033[1mdemo: %s\033[0m\n' "$*" >&2; }

fifo=$(mktemp -u)
mkfifo "$fifo"
"$bin/emojiart-gallery" --host 127.0.0.1 --port 0 >"$fifo" 2>/dev/null &
gallery=$!
agent=""
cleanup() { [ -n "$agent" ] && kill "$agent" 2>/dev/null; kill "$gallery" 2>/dev/null; rm -f "$fifo"; }
trap cleanup EXIT
exec 3<"$fifo"
read -r url <&3
say "gallery at $url; agent syncing into $dir (log: $dir/.emojiart-sync/sync.log)"

"$bin/emojiart-sync" --dir "$dir" --server "$url" --interval 30 &
agent=$!
for _ in $(seq 100); do [ -f "$dir/gallery_image_29.png" ] && break; sleep 0.1; done
sleep 1
say "deleting gallery_image_3.png and truncating gallery_image_5.png behind the agent's back"
rm -f "$dir/gallery_image_3.png"
: > "$dir/gallery_image_5.png"
sleep 1.5
say "status"
"$bin/emojiart-sync" status --dir "$dir"
say "purge memory (SIGUSR1), then SIGHUP (a full pass): every access is now a disk hit"
"$bin/emojiart-sync" purge memory --dir "$dir"
kill -HUP "$agent"
sleep 1
say "purge disk (SIGUSR2): the agent's files go and come back from the network"
"$bin/emojiart-sync" purge disk --dir "$dir"
sleep 2
say "stopping the agent (SIGTERM)"
kill -TERM "$agent"
wait "$agent" && status=0 || status=$?
agent=""
say "agent exited with status $status; $(ls "$dir"/*.png | wc -l) images in $dir"
say "a one-shot run now takes everything from disk:"
"$bin/emojiart-sync" --dir "$dir" --server "$url" --once 2>&1 | tail -n 3 || true
say "items 10 and 20 are missing on purpose: like the book's server, the gallery answers every tenth image with
200 and {\"error\": \"File not found.\"}, which is no PNG. The agent keeps them as failing, retries them with
backoff, and --once exits 2 (partial) naming them."
