#!/usr/bin/env bash
# Opt-in soak test (not part of contrib/test.sh): release build, then minutes of damage on both sides: mirror
# damage, purges, SIGHUPs and SIGHUP storms, ENOSPC (DIR on a tmpfs, when run as root), gallery fault plans and
# gallery restarts with new image content. Passes when the mirror ends complete and byte-identical to the final
# generation, the agent never exited, and its RSS, descriptors and threads stayed flat. See contrib/soak.py.
#   contrib/soak.sh [--minutes 3] [--count 200] [--seed 1] [--restarts 2] [--no-enospc] [--stall 180] [--small]
#   contrib/soak.sh --count 20000 --minutes 10 --small   # the load run (issue 7), as root for the ENOSPC actions;
#                                                       # --small: 16x16 images (full-size ones take the gallery
#                                                       # minutes to paint at 20,000)
set -euo pipefail
cd "$(dirname "$0")/.."
contrib/install-deps.sh
swift build -c release --product emojiart-sync >/dev/null
swift build -c release --product emojiart-gallery >/dev/null
bin=$(swift build -c release --show-bin-path)
exec python3 contrib/soak.py --agent "$bin/emojiart-sync" --gallery "$bin/emojiart-gallery" "$@"
