#!/usr/bin/env bash
# Large bodies (issue 23): the figures of photo-sized images, from the bundled gallery's `large:MEGABYTES` fault
# (a valid PNG of pseudo-random pixels stored uncompressed, the same bytes for every image).
#
#   contrib/bench/large-bodies.sh [--bin DIR] [--only rss,bwlimit]
#
#   rss:     a cold --once over 8 images of 50 MiB at --concurrency 8, with the defaults otherwise: wall and peak
#            RSS (/usr/bin/time -v), beside curl -Z --parallel-max 8 fetching the same URLs; every file checked
#            byte-identical with curl's. Target: peak RSS <= 100 MiB.
#   bwlimit: a cold --once over 4 images of 5 MiB (20 MiB) with --bwlimit 1M: wall. Target: 19-23 s.
#
# Builds release binaries (swift build -c release) unless --bin names a directory holding emojiart-sync and
# emojiart-gallery.
set -euo pipefail
cd "$(dirname "$0")/../.."

bin= only=rss,bwlimit
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "large-bodies.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
done
for part in ${only//,/ }; do
  case $part in rss|bwlimit) ;; *) echo "large-bodies.sh: --only takes rss, bwlimit (got $part)" >&2; exit 64 ;; esac
done
wants() { [[ ",$only," == *",$1,"* ]]; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
command -v curl >/dev/null || { echo "needs curl" >&2; exit 1; }
if [ -z "$bin" ]; then
  echo "building release binaries..." >&2
  swift build -c release --product emojiart-sync >/dev/null
  swift build -c release --product emojiart-gallery >/dev/null
  bin=$(swift build -c release --show-bin-path)
fi

work=$(mktemp -d -t emojiart-large-XXXXXX)
gallery=
trap '[ -n "$gallery" ] && kill "$gallery" 2>/dev/null; rm -rf "$work"' EXIT

# start_gallery COUNT FAULT: the gallery with every image under FAULT; sets url. The first request makes the
# large PNG (seconds for 50 MiB), so it is made here, before anything is timed.
start_gallery() {
  [ -n "$gallery" ] && kill "$gallery" 2>/dev/null && wait "$gallery" 2>/dev/null || true
  rm -f "$work/gallery.out"
  "$bin/emojiart-gallery" --host 127.0.0.1 --port 0 --count "$1" --quiet >"$work/gallery.out" 2>/dev/null &
  gallery=$!
  for _ in $(seq 100); do [ -s "$work/gallery.out" ] && break; sleep 0.1; done
  url=$(head -n1 "$work/gallery.out")
  curl -sf -X POST --data "{\"allImages\": \"$2\"}" "$url/_control/faults" >/dev/null
  curl -sf -o /dev/null "$url/gallery/image?1"
}

# measure LABEL COMMAND...: prints wall time and peak RSS; the command's exit status goes to $work/status.
measure() {
  local label=$1; shift
  local status=0
  /usr/bin/time -v "$@" >"$work/out" 2>"$work/time" || status=$?
  echo "$status" >"$work/status"
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time")
  printf '%-58s %10s %12s  exit %s\n' "$label" "$wall" "$(awk -v k="$rss" 'BEGIN {printf "%.1f MiB", k / 1024}')" "$status"
}

echo "binaries: $bin ($("$bin/emojiart-sync" --version | head -n1))"
printf '%-58s %10s %12s\n' "run" "wall" "peak RSS"

if wants rss; then
  start_gallery 8 large:50
  measure "emojiart-sync --once, 8 x 50 MiB, --concurrency 8" \
    "$bin/emojiart-sync" --dir "$work/mirror" --server "$url" --once -q --concurrency 8
  mkdir -p "$work/curl"
  for i in $(seq 1 8); do printf 'url = "%s/gallery/image?%d"\noutput = "gallery_image_%d.png"\n' "$url" "$i" "$i"; done >"$work/curl.cfg"
  measure "curl -Z --parallel-max 8 (peer, same URLs)" \
    sh -c "cd '$work/curl' && curl -sf --no-progress-meter -Z --parallel-max 8 -K '$work/curl.cfg'"
  same=0
  for i in $(seq 1 8); do cmp -s "$work/mirror/gallery_image_$i.png" "$work/curl/gallery_image_$i.png" && same=$((same + 1)); done
  echo "check: $same of 8 files byte-identical to curl's ($(stat -c %s "$work/curl/gallery_image_1.png") bytes each); tmp/ holds $(ls -A "$work/mirror/.emojiart-sync/tmp" | wc -l) files"
  rm -rf "$work/mirror" "$work/curl"
fi

if wants bwlimit; then
  start_gallery 4 large:5
  measure "emojiart-sync --once --bwlimit 1M, 4 x 5 MiB" \
    "$bin/emojiart-sync" --dir "$work/limited" --server "$url" --once -q --bwlimit 1M
  total=$(cat "$work/limited"/gallery_image_*.png | wc -c)
  echo "check: $(ls "$work/limited"/gallery_image_*.png | wc -l) files, $total bytes ($(awk -v b="$total" 'BEGIN {printf "%.2f MiB", b / 1048576}'))"
fi
