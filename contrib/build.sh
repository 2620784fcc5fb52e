#!/usr/bin/env bash
# The debug build that contrib/demo.sh and contrib/test.sh share (so whichever runs second starts from the
# other's build): `swift build --disable-index-store` plus the arguments given (e.g. --build-tests).
# Without an index store the compiler does about 10 % less work; nothing here needs one (an editor's
# SourceKit-LSP builds its own). A plain `swift build` uses other flags, so it rebuilds once.
set -euo pipefail
cd "$(dirname "$0")/.."
exec swift build --disable-index-store "$@"
