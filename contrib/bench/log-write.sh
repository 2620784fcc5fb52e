#!/usr/bin/env bash
# Logging N lines (default 100,000) through LogSink: this tree's buffered sink against the unbuffered one it
# replaced (the Logging sources of --old REV, by default the commit before LogWriter.swift was added); then
# the access line's two paths in this tree: swift-log with metadata against AccessLineWriter (lines/s, ns and
# heap allocations per line, counted by contrib/bench/malloc-count.c preloaded). --paths: only the latter.
#   contrib/bench/log-write.sh [--lines N] [--runs N] [--old REV] [--paths]
# Builds swift-log's Logging, POSIXThreads and contrib/bench/LogWriteBench.swift with each tree's
# Sources/EmojiArtSync/Logging/*.swift (swiftc -O, into .build-bench/log-write/), then runs each --runs times,
# alternately, writing to a fresh file in a temporary directory: once to the file only, once also to stderr
# (/dev/null), as the agent does by default. Needs `swift build` to have fetched swift-log (.build/checkouts).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
lines=100000 runs=5 old= paths_only=
while [ $# -gt 0 ]; do
  case $1 in
    --lines) lines=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --old) old=$2; shift 2 ;;
    --paths) paths_only=1; shift ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "log-write.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
done
[ -n "$old" ] || old=$(git log --diff-filter=A --format=%H -1 -- Sources/EmojiArtSync/Logging/LogWriter.swift)^
[ -d .build/checkouts/swift-log ] || swift package resolve
out=$root/.build-bench/log-write
rm -rf "$out" && mkdir -p "$out/old-src"
flags=(-O -swift-version 6 -enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility)
echo "== building Logging, POSIXThreads"
swiftc -O -parse-as-library -package-name swift_log -module-name Logging -emit-module -emit-module-path "$out/Logging.swiftmodule" \
  -emit-library -static -o "$out/libLogging.a" $(find .build/checkouts/swift-log/Sources/Logging -name '*.swift')
swiftc "${flags[@]}" -parse-as-library -module-name POSIXThreads -emit-module -emit-module-path "$out/POSIXThreads.swiftmodule" \
  -emit-library -static -o "$out/libPOSIXThreads.a" Sources/POSIXThreads/*.swift
build() {  # name, logging sources directory, extra flags...
  local name=$1 dir=$2; shift 2
  swiftc "${flags[@]}" -parse-as-library -package-name emojiart_sync -module-name LogWriteBench -I "$out" -L "$out" -lLogging -lPOSIXThreads "$@" \
    contrib/bench/LogWriteBench.swift "$dir"/*.swift Sources/EmojiArtSync/Support/SyncError.swift -o "$out/$name"
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "== building new (this tree), the allocation counter"
build new Sources/EmojiArtSync/Logging -D BUFFERED -D ACCESS_LINES
cc -O2 -shared -fPIC -o "$out/libmalloccount.so" contrib/bench/malloc-count.c
echo "== the access line: swift-log with metadata, then AccessLineWriter (logfmt, file only)"
for run in $(seq "$runs"); do
  echo "run $run:"
  LD_PRELOAD=$out/libmalloccount.so "$out/new" "$work/access" "$lines" access
done
[ -z "$paths_only" ] || exit 0
echo "== building old ($(git rev-parse --short "$old"))"
for file in $(git ls-tree --name-only "$old" Sources/EmojiArtSync/Logging/); do git show "$old:$file" > "$out/old-src/$(basename "$file")"; done
build old "$out/old-src"
for target in file stderr; do
  for run in $(seq "$runs"); do
    for name in old new; do
      rm -f "$work/sync.log"
      if [ $target = stderr ]; then result=$("$out/$name" "$work/sync.log" "$lines" stderr 2>/dev/null)
      else result=$("$out/$name" "$work/sync.log" "$lines"); fi
      echo "$name $target run $run: $result"
    done
  done
done
