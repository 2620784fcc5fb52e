#!/usr/bin/env bash
# The metrics port under 300 clients holding half-sent requests: the agent's threads and scrape latency,
# quiet and under the junk, release build.
set -euo pipefail
cd "$(dirname "$0")/../.."
contrib/install-deps.sh
swift build -c release --product emojiart-sync >/dev/null
swift build -c release --product emojiart-gallery >/dev/null
bin=$(swift build -c release --show-bin-path)
exec python3 contrib/bench/metrics-slowloris.py --agent "$bin/emojiart-sync" --gallery "$bin/emojiart-gallery" "$@"
