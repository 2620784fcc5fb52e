#!/usr/bin/env bash
# Opt-in soak test (not part of contrib/test.sh): release build, minutes of random damage, purges and gallery
# faults; passes when the mirror converges byte-identical with flat RSS and no descriptor growth.
#   contrib/soak.sh [--minutes 3] [--count 200] [--seed 1]
set -euo pipefail
cd "$(dirname "$0")/.."
contrib/install-deps.sh
swift build -c release --product emojiart-sync >/dev/null
swift build -c release --product emojiart-gallery >/dev/null
bin=$(swift build -c release --show-bin-path)
exec python3 contrib/soak.py --agent "$bin/emojiart-sync" --gallery "$bin/emojiart-gallery" "$@"
