#!/usr/bin/env bash
# Runs the whole test suite: unit tests and integration tests against the bundled gallery on 127.0.0.1.
# A compiler warning in our own code fails the run, as it fails review.
set -euo pipefail
cd "$(dirname "$0")/.."
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
# One test at a time: the integration tests each run a gallery, agents and inotify watchers, and measure
# descriptors and timings that parallel neighbours on a 2-core machine would disturb.
exec swift test --skip-build --no-parallel
