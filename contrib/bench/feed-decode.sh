#!/usr/bin/env bash
# Feed decoding, the streaming reader against JSONDecoder: time and peak RSS of decoding one feed of
# --count items (default 100,000), each listed three times and shuffled as the gallery serves it (35 MB).
#   contrib/bench/feed-decode.sh [--count N] [--runs N] [--feed FILE]
# Builds .build-bench/feed-decode (swiftc -O, the Feed sources and contrib/bench/FeedDecodeBench.swift),
# writes the feed with `emojiart-gallery export --small` unless --feed names one, then runs each decoder in
# a process of its own, so each peak RSS is that decoder's (the `read` line is the file alone); the
# `-repoll` lines decode the feed once untimed, then time decodes given its keys, as a poll of an
# unchanged feed does.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
count=100000 runs=5 feed=
while [ $# -gt 0 ]; do
  case $1 in
    --count) count=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --feed) feed=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "feed-decode.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
done
out=$root/.build-bench
mkdir -p "$out"
echo "== building $out/feed-decode"
# The Feed sources use swift-log's module through LogfmtFormatter: its release build's module and objects.
swift build -c release --target Logging >/dev/null
bin=$(swift build -c release --show-bin-path)
feed_sources=$(ls Sources/EmojiArtSync/Feed/*.swift | grep -v FeedSnapshot.swift)  # the snapshot needs the agent's I/O types
nice -n 10 swiftc -O -swift-version 6 -module-name FeedDecodeBench -package-name main -parse-as-library \
  -I "$root/Sources/CCrypto" -I "$bin/Modules" \
  -enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility \
  contrib/bench/FeedDecodeBench.swift $feed_sources \
  Sources/EmojiArtSync/Support/SyncError.swift Sources/EmojiArtSync/Support/SHA256Digest.swift \
  Sources/EmojiArtSync/Support/SystemCall.swift Sources/EmojiArtSync/Support/Array+Compacted.swift \
  Sources/EmojiArtSync/Storage/AssetFileName.swift Sources/EmojiArtSync/Logging/LogfmtFormatter.swift \
  Sources/EmojiArtSync/Logging/LogTimestamp.swift "$bin"/Logging.build/*.o -o "$out/feed-decode"
if [ -z "$feed" ]; then
  feed=$out/feed-$count.json
  if [ ! -s "$feed" ]; then
    echo "== exporting a gallery of $count small items"
    swift build -c release --product emojiart-gallery >/dev/null
    export_dir=$(mktemp -d)
    "$(swift build -c release --show-bin-path)/emojiart-gallery" export --dir "$export_dir" --count "$count" --small >/dev/null
    mv "$export_dir/gallery/images" "$feed"
    rm -rf "$export_dir"
  fi
fi
echo "== $feed: $(stat -c %s "$feed") bytes"
for mode in read new old new-repoll old-repoll; do "$out/feed-decode" "$mode" "$feed" "$runs"; done
