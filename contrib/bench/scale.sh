#!/usr/bin/env bash
# Scale benchmark: emojiart-sync against static exports of the gallery served by nginx, each figure printed
# beside its peer measured in the same run, as the median of --runs runs with min-max.
#
#   contrib/bench/scale.sh [--small-count 100000] [--full-count 1000] [--runs 5] [--deletes 50] [--window 10]
#                          [--bin DIR]   (use the binaries in DIR instead of building release ones)
#
# Builds release binaries as `make install` installs them (static Swift runtime, stripped); exports --full-count full-size (360x650, ~50 KB) and --small-count small (16x16,
# ~106 B) assets with `emojiart-gallery export`; serves each export with nginx (installed from Debian when
# missing) on 127.0.0.1 at a free port, with its own config in a temp dir (keep-alive on, access log off,
# sendfile, worker_rlimit_nofile high, ETag and Last-Modified on as nginx does for static files). Then, per
# export:
#   cold --once          vs  curl -Z --parallel-max 8 fetching the same URLs       (wall, peak RSS)
#   warm --once          vs  find DIR -type f                                      (wall, peak RSS)
#                            + image requests nginx saw during the warm run (stub_status)
#   background agent     idle CPU per minute, CPU per poll (feed unchanged / changed), repair latency p50/p99,
#                        RSS idle after the first pass and after each polling run
# The full-scale run (100,000 small, 1,000 full) is for a quiet machine; try small sizes first, e.g.
#   contrib/bench/scale.sh --small-count 2000 --full-count 200 --runs 3
set -euo pipefail
cd "$(dirname "$0")/../.."

small_count=100000 full_count=1000 runs=5 deletes=50 window=10 bin=
while [ $# -gt 0 ]; do
  case $1 in
    --small-count) small_count=$2; shift 2 ;;
    --full-count) full_count=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --deletes) deletes=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "scale.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
done

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
missing=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
[ -x /usr/bin/time ] || missing+=(time)
command -v curl >/dev/null || missing+=(curl)
command -v python3 >/dev/null || missing+=(python3)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} from Debian" >&2
  as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
contrib/install-deps.sh >/dev/null

work=$(mktemp -d -t emojiart-scale-XXXXXX)

nginx_pids=()
cleanup() {
  for pid in "${nginx_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
if [ -z "$bin" ]; then
  # What a user runs: the binaries `make install` puts in place (release, the Swift runtime linked in, stripped).
  echo "building release binaries (make; make install into a scratch root)..." >&2
  make >/dev/null
  make install DESTDIR="$work/pkg" PREFIX=/usr >/dev/null
  bin=$work/pkg/usr/bin
  build_kind="release, installed by make install"
else
  build_kind=$(case "$bin" in */release*) echo release ;; *) echo "NOT release: $bin" ;; esac)
fi

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# serve ROOT -> sets served_url; nginx runs in the foreground of a background job, killed on exit.
# (Not called in $(...): a command substitution would wait for nginx, and lose its PID.)
serve() {
  local root=$1 port conf prefix
  port=$(free_port)
  prefix=$(mktemp -d -p "$work" nginx-XXXX)
  mkdir -p "$prefix/logs" "$prefix/tmp"
  conf="$prefix/nginx.conf"
  cat >"$conf" <<NGINX
worker_processes 1;
worker_rlimit_nofile 65536;
error_log $prefix/logs/error.log warn;
pid $prefix/nginx.pid;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_timeout 65s;
  keepalive_requests 1000000;
  etag on;
  client_body_temp_path $prefix/tmp/body;
  proxy_temp_path $prefix/tmp/proxy;
  fastcgi_temp_path $prefix/tmp/fastcgi;
  uwsgi_temp_path $prefix/tmp/uwsgi;
  scgi_temp_path $prefix/tmp/scgi;
  types { image/png png; application/json json; }
  default_type application/json;
  server {
    listen 127.0.0.1:$port;
    root $root;
    location = /nginx_status { stub_status; }
  }
}
NGINX
  "$nginx_bin" -p "$prefix" -c "$conf" -g 'daemon off; master_process off;' >"$prefix/logs/stdout" 2>&1 &
  nginx_pids+=($!)
  served_url="http://127.0.0.1:$port"
  for _ in $(seq 100); do curl -fs -o /dev/null "$served_url/gallery/images" && break; sleep 0.1; done
  curl -fs -o /dev/null "$served_url/gallery/images" || { cat "$prefix/logs/error.log" >&2; exit 1; }
}

requests_seen() { curl -fs "$1/nginx_status" | awk 'NR==3 {print $3}'; }

# time_run OUTPUT_PREFIX command... -> appends "wall_seconds rss_kib" to OUTPUT_PREFIX.tsv
time_run() {
  local out=$1; shift
  /usr/bin/time -f '%e %M' -o "$work/time.one" "$@" >/dev/null 2>"$work/stderr.one" || {
    local status=$?; [ "$status" -eq 2 ] || { echo "command failed ($status): $*" >&2; tail -5 "$work/stderr.one" >&2; }
  }
  tail -n1 "$work/time.one" >>"$out.tsv"
}

# summary LABEL FILE.tsv COLUMN SCALE UNIT -> "median (min-max)"
summary() {
  python3 - "$2" "$3" "$4" "$5" <<'PY'
import statistics, sys
path, column, scale, unit = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
values = [float(line.split()[column]) * scale for line in open(path) if line.strip()]
print(f"{statistics.median(values):9.2f} {unit:<4} ({min(values):.2f}-{max(values):.2f})" if values else "n/a")
PY
}

row() { printf '%-46s %-34s %-34s\n' "$1" "$2" "$3"; }

bench() {  # label count flag(--small or "")
  local label=$1 count=$2 flag=$3 dir="$work/export-$1" url m
  echo "exporting $count $label assets..." >&2
  "$bin/emojiart-gallery" export --dir "$dir" --count "$count" $flag 2>/dev/null
  serve "$dir"; url=$served_url
  local valid=$(( count - count / 10 )) feed_bytes
  feed_bytes=$(stat -c %s "$dir/gallery/images")
  # The peer's URL list: every unique image url of the feed, error items included, as the agent requests them.
  python3 -c 'import json,sys; print("\n".join(sorted({i["url"] for i in json.load(open(sys.argv[1]))})))' \
    "$dir/gallery/images" | sed "s|^|$url|" >"$work/$label.urls"
  sed 's|.*/\([0-9]*\)\.png$|url = "&"\noutput = "\1.png"|' "$work/$label.urls" >"$work/$label.curl"

  local s="$work/$label"
  for i in $(seq "$runs"); do
    # Fresh directories every run, removed only after the last one: this VM's disk is slow for a minute after
    # 100,000 files are deleted (online discard), which would land in the next timed run.
    m="$work/mirror-$label-$i"
    time_run "$s.cold" "$bin/emojiart-sync" --dir "$m" --server "$url" --once -q
    local before after
    before=$(requests_seen "$url")
    time_run "$s.warm" "$bin/emojiart-sync" --dir "$m" --server "$url" --once -q
    after=$(requests_seen "$url")
    # Minus the status request itself and the warm run's one feed request.
    echo "$(( after - before - 2 ))" >>"$s.warmreq.tsv"
    mkdir -p "$work/curl-$label-$i"
    time_run "$s.curl" sh -c "cd '$work/curl-$label-$i' && curl -s --no-progress-meter -Z --parallel-max 8 -K '$work/$label.curl'"
    # The durable peer: curl's files made durable as the agent's are (one sync at the end), in fresh directories.
    mkdir -p "$work/curlsync-$label-$i"; sync
    time_run "$s.curlsync" sh -c "cd '$work/curlsync-$label-$i' && curl -s --no-progress-meter -Z --parallel-max 8 -K '$work/$label.curl' && sync -f ."
    time_run "$s.find" find "$m" -type f
  done
  local files same=0
  files=$(find "$m" -maxdepth 1 -name '*.png' | wc -l)
  for f in "$work/curl-$label-$runs"/*.png; do
    n=$(basename "$f" .png); [ $(( n % 10 )) -eq 0 ] && continue
    cmp -s "$f" "$dir/gallery/image/$n.png" && same=$((same + 1))
  done

  echo
  echo "== $label: $count assets ($valid images, feed $(( feed_bytes / 1024 )) KiB), nginx at $url, $runs runs: median (min-max)"
  row "" "emojiart-sync" "peer"
  row "cold --once, wall (peer: curl -Z -P8)" "$(summary x "$s.cold.tsv" 0 1 s)" "$(summary x "$s.curl.tsv" 0 1 s)"
  row "cold --once, wall (peer: curl -Z -P8 + sync)" "$(summary x "$s.cold.tsv" 0 1 s)" "$(summary x "$s.curlsync.tsv" 0 1 s)"
  row "cold --once, peak RSS" "$(summary x "$s.cold.tsv" 1 0.0009765625 MiB)" "$(summary x "$s.curl.tsv" 1 0.0009765625 MiB)"
  row "warm --once, wall (peer: find -type f)" "$(summary x "$s.warm.tsv" 0 1 s)" "$(summary x "$s.find.tsv" 0 1 s)"
  row "warm --once, peak RSS" "$(summary x "$s.warm.tsv" 1 0.0009765625 MiB)" "$(summary x "$s.find.tsv" 1 0.0009765625 MiB)"
  row "warm --once, image requests nginx saw" "$(summary x "$s.warmreq.tsv" 0 1 req)" "0 (find)"
  echo "check: $files PNGs in the agent's mirror; curl's copies byte-identical to the export: $same of $valid"
  python3 contrib/bench/scale-agent.py --agent "$bin/emojiart-sync" --server "$url" --feed "$dir/gallery/images" \
    --export "$dir" --runs "$runs" --deletes "$deletes" --window "$window" --label "$label"
}

echo "scale benchmark ($build_kind binaries) on $(nproc) cores, $(uname -sr); nginx $("$nginx_bin" -v 2>&1 | sed 's|.*/||'), $(curl --version | head -n1 | cut -d' ' -f1-2)"
bench full "$full_count" ""
bench small "$small_count" --small
