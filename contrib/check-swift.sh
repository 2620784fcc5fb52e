#!/bin/sh
# Checks that a Swift toolchain new enough to build emojiart-sync (6.2: Package.swift's swift-tools-version) is
# on PATH, and says where one comes from when it is not: contrib/demo.sh and contrib/test.sh run it first, so a
# fresh machine gets this message instead of `swift: command not found`. Exits 0 when the toolchain will do.
set -eu
needed_major=6
needed_minor=2
where="Install one from https://www.swift.org/install/linux/ (a tarball for your distribution, or swiftly,
swift.org's toolchain installer), put its usr/bin on PATH, and check with: swift --version
(README.md, \"Prerequisites\")."
if ! command -v swift >/dev/null 2>&1; then
  printf '%s\n%s\n' "emojiart-sync needs a Swift $needed_major.$needed_minor (or newer) toolchain, and there is no swift on PATH." "$where" >&2
  exit 1
fi
# "Swift version 6.3.1 (swift-6.3.1-RELEASE)"; swiftly and distribution builds print the same first words.
version=$(swift --version 2>&1 | sed -n 's/.*Swift version \([0-9][0-9]*\)\.\([0-9][0-9]*\).*/\1 \2/p' | head -n 1)
if [ -z "$version" ]; then
  echo "check-swift: cannot read the version from 'swift --version'; going on" >&2
  exit 0
fi
set -- $version
if [ "$1" -lt "$needed_major" ] || { [ "$1" -eq "$needed_major" ] && [ "$2" -lt "$needed_minor" ]; }; then
  printf '%s\n%s\n' "emojiart-sync needs Swift $needed_major.$needed_minor or newer; $(command -v swift) is Swift $1.$2." "$where" >&2
  exit 1
fi
