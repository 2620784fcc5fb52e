#!/usr/bin/env bash
# Repair latency (delete -> file back, byte-identical), p50/p99 over 250 deletes, release build,
# side by side with an inotifywait|curl shell loop when inotify-tools is installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
contrib/install-deps.sh
swift build -c release --product emojiart-sync >/dev/null
swift build -c release --product emojiart-gallery >/dev/null
bin=$(swift build -c release --show-bin-path)
exec python3 contrib/bench/repair-latency.py --agent "$bin/emojiart-sync" --gallery "$bin/emojiart-gallery" "$@"
