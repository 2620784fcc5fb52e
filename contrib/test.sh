#!/usr/bin/env bash
# Runs the whole test suite: unit tests and integration tests against the bundled gallery on 127.0.0.1.
# A compiler warning in our own code fails the run, as it fails review.
#
#   contrib/test.sh            two test processes at once, each running its tests one at a time
#   contrib/test.sh --serial   one process, one test at a time (`swift test --no-parallel`; more options
#                              after it go to swift test, e.g. --filter OnceSyncTests)
#
# contrib/run-tests.sh says how the suite is split; this script installs, builds and lints first.
set -euo pipefail
cd "$(dirname "$0")/.."
contrib/check-swift.sh
contrib/install-deps.sh
log=$(mktemp)
trap 'rm -f "$log"' EXIT
swift build --build-tests 2>&1 | tee "$log"
if grep -E "^$PWD/(Sources|Tests)/.*: warning:" "$log"; then
  echo "test.sh: the build has warnings in our code (above); fix them." >&2
  exit 1
fi
# The man pages must stay clean for mandoc's linter, when it is installed (Debian: mandoc).
if command -v mandoc >/dev/null; then
  mandoc -T lint -W warning man/*.1
fi
contrib/run-tests.sh "$@"
