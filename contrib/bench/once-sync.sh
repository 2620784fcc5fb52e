#!/usr/bin/env bash
# Benchmark: a --once sync of N unique assets (default 1000) from the bundled gallery, cold and warm,
# side by side with curl fetching the same URLs (8 in parallel, the agent's default concurrency).
# Prints wall time and peak RSS from /usr/bin/time -v. Release builds; the gallery's images are
# generated once before timing so that the server's drawing is not measured.
#   contrib/bench/once-sync.sh [N]
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-1000}
count=$(( n + n / 9 ))           # every 10th item is an error item; this leaves >= n valid ones
contrib/install-deps.sh
command -v /usr/bin/time >/dev/null || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
swift build -c release --product emojiart-sync >/dev/null
swift build -c release --product emojiart-gallery >/dev/null
bin=$(swift build -c release --show-bin-path)
work=$(mktemp -d)
trap 'kill $gallery 2>/dev/null || true; rm -rf "$work"' EXIT
"$bin/emojiart-gallery" --host 127.0.0.1 --port 0 --count "$count" >"$work/gallery.out" 2>/dev/null &
gallery=$!
for _ in $(seq 100); do [ -s "$work/gallery.out" ] && break; sleep 0.1; done
url=$(head -n1 "$work/gallery.out")
urls="$work/urls.txt"
for i in $(seq 1 "$count"); do [ $((i % 10)) -ne 0 ] && echo "$url/gallery/image?$i"; done | head -n "$n" > "$urls"
# Warm the gallery's own image cache (it draws each image on first request).
sed 's|.*|url = "&"\noutput = "/dev/null"|' "$urls" > "$work/warm.cfg"
curl -s --no-progress-meter -Z --parallel-max 4 -K "$work/warm.cfg"

measure() {  # label, command...
  local label=$1; shift
  /usr/bin/time -v "$@" >"$work/out" 2>"$work/time" || true
  local wall rss
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$work/time")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time")
  printf '%-44s %12s %12s\n' "$label" "$wall" "$((rss / 1024)) MiB"
}

printf '%-44s %12s %12s\n' "run ($n unique assets, $(( count * 3 )) feed entries)" "wall" "peak RSS"
measure "emojiart-sync --once, cold" "$bin/emojiart-sync" --dir "$work/mirror" --server "$url" --once -q
measure "emojiart-sync --once, warm (all on disk)" "$bin/emojiart-sync" --dir "$work/mirror" --server "$url" --once -q
measure "emojiart-sync --once --verify full, cold" "$bin/emojiart-sync" --dir "$work/mirror-full" --server "$url" --once -q --verify full
mkdir -p "$work/curl"
sed 's|.*image?\(.*\)|url = "&"\noutput = "gallery_image_\1.png"|' "$urls" > "$work/curl.cfg"
measure "curl -Z --parallel-max 8 (peer, same URLs)" sh -c "cd '$work/curl' && curl -s --no-progress-meter -Z --parallel-max 8 -K '$work/curl.cfg'"
files=$(ls "$work/mirror"/*.png | wc -l)
same=0
for f in "$work/mirror"/*.png; do cmp -s "$f" "$work/curl/$(basename "$f")" && same=$((same + 1)); done
echo "check: $files files in the mirror, $same byte-identical to curl's copies"
