#!/usr/bin/env bash
# The agent's RSS over repeated full passes: a release agent syncs a --small gallery of --count items
# (default 20,000), then gets --rounds SIGHUPs (default 20), each a full pass over the feed; every fifth is
# followed by a memory purge (SIGUSR1). One line per round: the RSS after that pass. Flat is the target: a
# rising line means memory kept per pass (a leak, or freed memory the allocator did not give back).
#   contrib/bench/rss-over-passes.sh [--count 20000] [--rounds 20] [--bin DIR]   (--bin: use built binaries)
set -euo pipefail
cd "$(dirname "$0")/../.."
count=20000 rounds=20 bin=
while [[ $# -gt 0 ]]; do
  case $1 in
    --count) count=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    *) echo "rss-over-passes.sh: unknown argument '$1'" >&2; exit 64 ;;
  esac
done
if [[ -z $bin ]]; then
  contrib/install-deps.sh
  swift build -c release >/dev/null
  bin=$(swift build -c release --show-bin-path)
fi
work=$(mktemp -d /tmp/emojiart-rss-XXXXXX)
gallery= agent=
cleanup() { [[ -n $agent ]] && kill "$agent" 2>/dev/null; [[ -n $gallery ]] && kill "$gallery" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
"$bin/emojiart-gallery" --port 0 --count "$count" --small --quiet > "$work/url" 2>/dev/null &
gallery=$!
until [[ -s $work/url ]]; do sleep 0.1; done
"$bin/emojiart-sync" --dir "$work/mirror" --server "$(head -1 "$work/url")" --interval 3600 -q &
agent=$!
images=$(( count - count / 10 ))
until [[ $(find "$work/mirror" -maxdepth 1 -name '*.png' 2>/dev/null | wc -l) -ge $images ]]; do sleep 1; done
last_poll() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["lastPoll"]["at"])' "$work/mirror/.emojiart-sync/status.json" 2>/dev/null || true; }
rss() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$agent/status"; }
until [[ -n $(last_poll) ]]; do sleep 0.5; done
echo "after the first sync: RSS $(rss) MiB ($images files)"
for round in $(seq 1 "$rounds"); do
  before=$(last_poll)
  kill -HUP "$agent"
  until [[ $(last_poll) != "$before" ]]; do sleep 0.2; done
  (( round % 5 == 0 )) && kill -USR1 "$agent"
  echo "pass $round: RSS $(rss) MiB"
done
