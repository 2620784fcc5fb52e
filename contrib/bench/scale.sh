#!/usr/bin/env bash
# Scale benchmark: emojiart-sync against static exports of the gallery served by nginx, each figure printed
# beside its peer measured in the same run, as the median of --runs runs with min-max.
#
#   contrib/bench/scale.sh [--small-count 100000] [--full-count 1000] [--runs 5] [--deletes 300] [--window 10]
#                          [--cold-after 2000]   (files the agent's cold sync writes before deletions start)
#                          [--bin DIR]   (use the binaries in DIR instead of building release ones)
#                          [--only http,https,profile,agent]   (only these parts; a count of 0 skips that export)
#
# Builds release binaries as `make install` installs them (static Swift runtime, stripped); exports --full-count full-size (360x650, ~50 KB) and --small-count small (16x16,
# ~106 B) assets with `emojiart-gallery export`; serves each export with nginx (installed from Debian when
# missing) on 127.0.0.1 at a free port, with its own config in a temp dir (keep-alive on, access log off,
# sendfile, worker_rlimit_nofile high, ETag and Last-Modified on as nginx does for static files), over HTTP and
# over HTTPS (TLS with a private CA and a server certificate the script makes with openssl; HTTP/2 offered by
# ALPN). Then, per export:
#   http:  cold --once   vs  curl -Z --parallel-max 8 fetching the same URLs (and + sync),
#                            rclone copy --transfers 8 (http remote)                (wall, peak RSS)
#          warm --once   vs  find DIR -type f; rclone copy again                   (wall, peak RSS)
#                            + image requests nginx saw during the warm run (stub_status)
#          --once of a cp -a copy of the mirror  vs  rclone copy again into a cp -a copy of its own
#   https: cold --once with --http-version auto, 1.1 and 2 (--ca-cert)
#                        vs  curl -Z --parallel-max 8 --http1.1 and --http2 (--cacert),
#                            rclone copy --transfers 8 (--ca-cert)    (wall, peak RSS, connections nginx accepted)
#   profile: one more cold --once over HTTPS (--http-version 1.1) and one curl -Z --http1.1 run, each recorded
#          machine-wide by `perf record -a -g` (skipped when perf is not installed): seconds of CPU per owner (the
#          program's own code, each library, the kernel's work by kind of system call, nginx, idle), and how far
#          the agent's wall could drop were its own code free (contrib/bench/cpu-owners.py)
#   agent: background agent, for each export: idle CPU per minute and RSS after the first pass, CPU of a full
#          pass on SIGHUP (feed unchanged / changed), CPU per poll (feed unchanged / re-sent / changed) and RSS
#          after each polling run, repair latency p50/p99/max (delete -> back byte-identical, timed by inotify)
#          for a lone deletion, while full passes run (SIGHUP every 0.5 s) and while the agent's own cold sync of
#          the export runs (deletions from file --cold-after on; those made after the sync ended do not count)
# The full-scale run (100,000 small, 1,000 full) is for a quiet machine; try small sizes first, e.g.
#   contrib/bench/scale.sh --small-count 2000 --full-count 200 --runs 3
set -euo pipefail
cd "$(dirname "$0")/../.."

small_count=100000 full_count=1000 runs=5 deletes=300 window=10 cold_after=2000 bin= only=http,https,profile,agent
while [ $# -gt 0 ]; do
  case $1 in
    --small-count) small_count=$2; shift 2 ;;
    --full-count) full_count=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --deletes) deletes=$2; shift 2 ;;
    --window) window=$2; shift 2 ;;
    --cold-after) cold_after=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h|--help) sed -n '2,/^[^#]/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "scale.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
  esac
done
for part in ${only//,/ }; do
  case $part in http|https|profile|agent) ;; *) echo "scale.sh: --only takes http, https, profile, agent (got $part)" >&2; exit 64 ;; esac
done
wants() { [[ ",$only," == *",$1,"* ]]; }

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
missing=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx)
[ -x /usr/bin/time ] || missing+=(time)
command -v curl >/dev/null || missing+=(curl)
command -v python3 >/dev/null || missing+=(python3)
command -v openssl >/dev/null || missing+=(openssl)
command -v rclone >/dev/null || missing+=(rclone)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} from Debian" >&2
  as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
# The profile part's recorder: perf, run as is where the kernel lets this user record every CPU
# (kernel.perf_event_paranoid <= 0), else through sudo where that needs no password (never a prompt in the
# middle of a run). perf is not installed here (it must match the running kernel): without it, or without the
# right to record, the part is skipped and says why.
perf_bin=$(command -v perf || true) perf_run=() perf_missing=
if [ -z "$perf_bin" ]; then
  perf_missing="perf is not installed (Debian: apt-get install linux-perf)"
elif [ "$(id -u)" -eq 0 ] || [ "$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)" -le 0 ]; then
  perf_run=("$perf_bin")
elif sudo -n true 2>/dev/null; then
  perf_run=(sudo -n "$perf_bin")
else
  perf_missing="recording every CPU needs root, passwordless sudo or kernel.perf_event_paranoid <= 0"
fi
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

# A private CA and a certificate for 127.0.0.1 and localhost signed by it: what a gallery on a private network
# would have. The agent trusts it with --ca-cert, curl with --cacert, rclone with --ca-cert.
make_certificates() {
  local tls=$work/tls
  mkdir -p "$tls"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=emojiart-sync bench CA" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
    -keyout "$tls/ca.key" -out "$tls/ca.pem" 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$tls/server.key" -out "$tls/server.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n' >"$tls/ext"
  openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.pem" -CAkey "$tls/ca.key" -CAcreateserial -days 2 \
    -extfile "$tls/ext" -out "$tls/server.pem" 2>/dev/null
  ca_cert=$tls/ca.pem
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# serve ROOT -> sets served_url (http) and served_tls_url (https, HTTP/2 offered: the bookworm nginx 1.22
# spelling `listen ... ssl http2`); nginx runs in the foreground of a background job, killed on exit.
# (Not called in $(...): a command substitution would wait for nginx, and lose its PID.)
# The TLS server keeps the usual session cache; /gallery/image/ has an index page (autoindex) for rclone's
# http remote, which lists a directory to find its files.
serve() {
  local root=$1 port tls_port conf prefix
  port=$(free_port)
  tls_port=$(free_port)
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
    listen 127.0.0.1:$tls_port ssl http2;
    ssl_certificate $work/tls/server.pem;
    ssl_certificate_key $work/tls/server.key;
    ssl_session_cache shared:SSL:10m;
    root $root;
    location = /nginx_status { stub_status; }
    location /gallery/image/ { autoindex on; }
  }
}
NGINX
  "$nginx_bin" -p "$prefix" -c "$conf" -g 'daemon off; master_process off;' >"$prefix/logs/stdout" 2>&1 &
  nginx_pids+=($!)
  served_url="http://127.0.0.1:$port"
  served_tls_url="https://127.0.0.1:$tls_port"
  for _ in $(seq 100); do curl -fs -o /dev/null "$served_url/gallery/images" && break; sleep 0.1; done
  curl -fs -o /dev/null "$served_url/gallery/images" || { cat "$prefix/logs/error.log" >&2; exit 1; }
  curl -fs -o /dev/null --cacert "$ca_cert" --http2 "$served_tls_url/gallery/images" \
    || { echo "nginx does not answer over HTTPS at $served_tls_url" >&2; cat "$prefix/logs/error.log" >&2; exit 1; }
}

requests_seen() { curl -fs "$1/nginx_status" | awk 'NR==3 {print $3}'; }
# Connections nginx has accepted (all servers of it; the status request itself is one).
connections_seen() { curl -fs "$1/nginx_status" | awk 'NR==3 {print $1}'; }

# time_run OUTPUT_PREFIX command... -> appends "wall_seconds rss_kib user_seconds system_seconds written_blocks" to
# OUTPUT_PREFIX.tsv (written: what the command wrote to file systems, in 512-byte blocks, as `getrusage` counts it)
time_run() {
  local out=$1; shift
  /usr/bin/time -f '%e %M %U %S %O' -o "$work/time.one" "$@" >/dev/null 2>"$work/stderr.one" || {
    local status=$?; [ "$status" -eq 2 ] || { echo "command failed ($status): $*" >&2; tail -5 "$work/stderr.one" >&2; }
  }
  tail -n1 "$work/time.one" >>"$out.tsv"
}

# summary LABEL FILE.tsv COLUMN SCALE UNIT -> "median (min-max)"; COLUMN may be a sum of columns ("2+3": CPU)
summary() {
  python3 - "$2" "$3" "$4" "$5" <<'PY'
import statistics, sys
path, columns, scale, unit = sys.argv[1], [int(c) for c in sys.argv[2].split("+")], float(sys.argv[3]), sys.argv[4]
values = [sum(float(line.split()[c]) for c in columns) * scale for line in open(path) if line.strip()]
print(f"{statistics.median(values):9.2f} {unit:<4} ({min(values):.2f}-{max(values):.2f})" if values else "n/a")
PY
}

row() { printf '%-46s %-34s %-34s\n' "$1" "$2" "$3"; }

# time_counted URL OUTPUT_PREFIX command... -> time_run, and the connections nginx accepted meanwhile (less the
# status requests) appended to OUTPUT_PREFIX.conn.tsv, the CPU seconds nginx spent meanwhile to OUTPUT_PREFIX.nginx.tsv
nginx_cpu_ticks() { awk '{print $14 + $15}' "/proc/${nginx_pids[-1]}/stat"; }
time_counted() {
  local status_url=$1 out=$2 before ticks; shift 2
  before=$(connections_seen "$status_url")
  ticks=$(nginx_cpu_ticks)
  time_run "$out" "$@"
  echo "$(( $(connections_seen "$status_url") - before - 1 ))" >>"$out.conn.tsv"
  awk -v ticks="$(( $(nginx_cpu_ticks) - ticks ))" -v hz="$(getconf CLK_TCK)" 'BEGIN {print ticks / hz}' >>"$out.nginx.tsv"
}

# rclone's copy of the export's image folder from an http remote (nginx's index page lists it), 8 transfers as
# curl and the agent run, no config file: "${rclone_copy[@]}" --http-url URL/gallery/image/ :http: DEST
rclone_copy=(rclone copy -q --config /dev/null --transfers 8)

row5() { printf '%-34s %-26s %-26s %-28s %-26s %s\n' "$@"; }

bench() {  # label count flag(--small or "")
  local label=$1 count=$2 flag=$3 dir="$work/export-$1" url tls_url m
  [ "$count" -gt 0 ] || return 0
  echo "exporting $count $label assets..." >&2
  "$bin/emojiart-gallery" export --dir "$dir" --count "$count" $flag 2>/dev/null
  serve "$dir"; url=$served_url; tls_url=$served_tls_url
  local valid=$(( count - count / 10 )) feed_bytes
  feed_bytes=$(stat -c %s "$dir/gallery/images")
  # The peer's URL list: every unique image url of the feed, error items included, as the agent requests them.
  python3 -c 'import json,sys; print("\n".join(sorted({i["url"] for i in json.load(open(sys.argv[1]))})))' \
    "$dir/gallery/images" | sed "s|^|$url|" >"$work/$label.urls"
  sed 's|.*/\([0-9]*\)\.png$|url = "&"\noutput = "\1.png"|' "$work/$label.urls" >"$work/$label.curl"
  sed "s|$url|$tls_url|" "$work/$label.curl" >"$work/$label.tls.curl"

  local s="$work/$label" v
  for i in $(seq "$runs"); do
    # Fresh directories every run, removed only after the last one: this VM's disk is slow for a minute after
    # 100,000 files are deleted (online discard), which would land in the next timed run.
    m="$work/mirror-$label-$i"
    if wants http; then
      # Each cold run starts with nothing dirty on the file system: the agent's commits flush it (`syncfs`), and
      # would otherwise also write out what the export or the run before left (426 MB after the small export).
      sync
      time_run "$s.cold" "$bin/emojiart-sync" --dir "$m" --server "$url" --once -q
      local before after
      before=$(requests_seen "$url")
      time_run "$s.warm" "$bin/emojiart-sync" --dir "$m" --server "$url" --once -q
      after=$(requests_seen "$url")
      # Minus the status request itself and the warm run's one feed request.
      echo "$(( after - before - 2 ))" >>"$s.warmreq.tsv"
      mkdir -p "$work/curl-$label-$i"; sync
      time_run "$s.curl" sh -c "cd '$work/curl-$label-$i' && curl -s --no-progress-meter -Z --parallel-max 8 -K '$work/$label.curl'"
      # The durable peer: curl's files made durable as the agent's are (one sync at the end), in fresh directories.
      mkdir -p "$work/curlsync-$label-$i"; sync
      time_run "$s.curlsync" sh -c "cd '$work/curlsync-$label-$i' && curl -s --no-progress-meter -Z --parallel-max 8 -K '$work/$label.curl' && sync -f ."
      time_run "$s.find" find "$m" -type f
      # rclone cold into a fresh directory, then warm: the same copy again, which lists and compares each file.
      sync
      time_run "$s.rclone" "${rclone_copy[@]}" --http-url "$url/gallery/image/" :http: "$work/rclone-$label-$i"
      time_run "$s.rclonewarm" "${rclone_copy[@]}" --http-url "$url/gallery/image/" :http: "$work/rclone-$label-$i"
      # A copy of each mirror (`cp -a`: the same bytes and times under new inodes, as a restore from a backup or a
      # move to another disk leaves it), synced again: the agent reads and hashes each file (its identity
      # changed) and adopts it; rclone compares sizes and times.
      cp -a "$m" "$m-copy"; cp -a "$work/rclone-$label-$i" "$work/rclone-$label-$i-copy"; sync
      time_run "$s.copied" "$bin/emojiart-sync" --dir "$m-copy" --server "$url" --once -q
      time_run "$s.rclonecopied" "${rclone_copy[@]}" --http-url "$url/gallery/image/" :http: "$work/rclone-$label-$i-copy"
    fi
    if wants https; then
      # The same cold run over TLS, HTTP/2 offered: the agent with each --http-version, then the peers.
      for v in auto 1.1 2; do
        sync  # nothing dirty left by the run before (see the cold run above)
        time_counted "$url" "$s.tls-$v" "$bin/emojiart-sync" --dir "$work/tls-$v-$label-$i" --server "$tls_url" \
          --ca-cert "$ca_cert" --http-version "$v" --once -q
      done
      for v in 1.1 2; do
        mkdir -p "$work/tls-curl$v-$label-$i"; sync
        time_counted "$url" "$s.tls-curl$v" sh -c "cd '$work/tls-curl$v-$label-$i' && curl -s --no-progress-meter --http$v --cacert '$ca_cert' -Z --parallel-max 8 -K '$work/$label.tls.curl'"
      done
      sync
      time_counted "$url" "$s.tls-rclone" "${rclone_copy[@]}" --ca-cert "$ca_cert" --http-url "$tls_url/gallery/image/" \
        :http: "$work/tls-rclone-$label-$i"
    fi
  done
  if wants profile && [ -z "$perf_missing" ]; then
    # After the timed runs, so the recordings cost them nothing. 999 Hz: about 30,000 samples a run on 2 cores.
    sync
    "${perf_run[@]}" record -q -a -g -F 999 -o "$s.profile-agent.data" -- /usr/bin/time -f %e -o "$s.profile-agent.wall" \
      "$bin/emojiart-sync" --dir "$work/profile-$label" --server "$tls_url" --ca-cert "$ca_cert" --http-version 1.1 \
      --once -q >/dev/null 2>&1 || true
    mkdir -p "$work/profile-curl-$label"; sync
    "${perf_run[@]}" record -q -a -g -F 999 -o "$s.profile-curl.data" -- /usr/bin/time -f %e -o "$s.profile-curl.wall" \
      sh -c "cd '$work/profile-curl-$label' && curl -s --no-progress-meter --http1.1 --cacert '$ca_cert' -Z --parallel-max 8 -K '$work/$label.tls.curl'" \
      >/dev/null 2>&1 || true
  fi

  echo
  if wants http; then
    local files same=0 rclone_files
    files=$(find "$m" -maxdepth 1 -name '*.png' | wc -l)
    rclone_files=$(find "$work/rclone-$label-$runs" -name '*.png' | wc -l)
    # One process for the whole check (a `cmp` per file was 100,000 forks at the full scale: minutes).
    same=$(python3 - "$work/curl-$label-$runs" "$dir/gallery/image" <<'PY'
import os, sys
copies, export = sys.argv[1], sys.argv[2]
same = 0
for name in os.listdir(copies):
    if not name.endswith(".png") or int(name[:-4]) % 10 == 0:
        continue
    with open(os.path.join(copies, name), "rb") as a, open(os.path.join(export, name), "rb") as b:
        same += a.read() == b.read()
print(same)
PY
)
    echo "== $label: $count assets ($valid images, feed $(( feed_bytes / 1024 )) KiB), nginx at $url, $runs runs: median (min-max)"
    row "" "emojiart-sync" "peer"
    row "cold --once, wall (peer: curl -Z -P8)" "$(summary x "$s.cold.tsv" 0 1 s)" "$(summary x "$s.curl.tsv" 0 1 s)"
    row "cold --once, wall (peer: curl -Z -P8 + sync)" "$(summary x "$s.cold.tsv" 0 1 s)" "$(summary x "$s.curlsync.tsv" 0 1 s)"
    row "cold --once, wall (peer: rclone copy)" "$(summary x "$s.cold.tsv" 0 1 s)" "$(summary x "$s.rclone.tsv" 0 1 s)"
    row "cold --once, written (peer: curl)" "$(summary x "$s.cold.tsv" 4 0.000512 MB)" "$(summary x "$s.curl.tsv" 4 0.000512 MB)"
    row "cold --once, peak RSS (peer: curl)" "$(summary x "$s.cold.tsv" 1 0.0009765625 MiB)" "$(summary x "$s.curl.tsv" 1 0.0009765625 MiB)"
    row "cold --once, peak RSS (peer: rclone)" "$(summary x "$s.cold.tsv" 1 0.0009765625 MiB)" "$(summary x "$s.rclone.tsv" 1 0.0009765625 MiB)"
    row "warm --once, wall (peer: find -type f)" "$(summary x "$s.warm.tsv" 0 1 s)" "$(summary x "$s.find.tsv" 0 1 s)"
    row "warm --once, wall (peer: rclone copy again)" "$(summary x "$s.warm.tsv" 0 1 s)" "$(summary x "$s.rclonewarm.tsv" 0 1 s)"
    row "warm --once, peak RSS (peer: find)" "$(summary x "$s.warm.tsv" 1 0.0009765625 MiB)" "$(summary x "$s.find.tsv" 1 0.0009765625 MiB)"
    row "warm --once, peak RSS (peer: rclone)" "$(summary x "$s.warm.tsv" 1 0.0009765625 MiB)" "$(summary x "$s.rclonewarm.tsv" 1 0.0009765625 MiB)"
    row "warm --once, image requests nginx saw" "$(summary x "$s.warmreq.tsv" 0 1 req)" "0 (find)"
    row "cp -a copy, --once, wall (peer: rclone again)" "$(summary x "$s.copied.tsv" 0 1 s)" "$(summary x "$s.rclonecopied.tsv" 0 1 s)"
    row "cp -a copy, --once, peak RSS (peer: rclone)" "$(summary x "$s.copied.tsv" 1 0.0009765625 MiB)" "$(summary x "$s.rclonecopied.tsv" 1 0.0009765625 MiB)"
    echo "check: $files PNGs in the agent's mirror, $rclone_files in rclone's; curl's copies byte-identical to the export: $same of $valid"
  fi
  if wants https; then
    echo "== $label over HTTPS: $count assets, nginx at $tls_url (TLS, private CA, HTTP/2 offered), $runs runs: median (min-max)"
    tls_row() {  # LABEL PREFIX
      row5 "$1" "$(summary x "$2.tsv" 0 1 s)" "$(summary x "$2.tsv" 2+3 1 s)" \
        "$(summary x "$2.tsv" 1 0.0009765625 MiB)" "$(summary x "$2.nginx.tsv" 0 1 s)" "$(summary x "$2.conn.tsv" 0 1 '')"
    }
    row5 "cold run" "wall" "CPU (user + system)" "peak RSS" "nginx's CPU meanwhile" "connections"
    for v in auto 1.1 2; do tls_row "emojiart-sync --http-version $v" "$s.tls-$v"; done
    for v in 1.1 2; do tls_row "curl -Z -P8 --http$v" "$s.tls-curl$v"; done
    tls_row "rclone copy --transfers 8" "$s.tls-rclone"
    echo -n "check: PNGs in the last run's mirrors:"
    for v in auto 1.1 2; do echo -n " agent $v $(find "$work/tls-$v-$label-$runs" -maxdepth 1 -name '*.png' | wc -l),"; done
    echo " curl --http2 $(find "$work/tls-curl2-$label-$runs" -name '*.png' | wc -l), rclone $(find "$work/tls-rclone-$label-$runs" -name '*.png' | wc -l)"
  fi
  if wants profile; then
    if [ -n "$perf_missing" ]; then
      echo "== $label: profile skipped: $perf_missing"
    else
      local target=""
      # The target of the cold HTTPS run: 0.67x rclone's median in this run.
      [ -s "$s.tls-rclone.tsv" ] && target=$(python3 -c 'import statistics,sys; print(0.67 * statistics.median(float(l.split()[0]) for l in open(sys.argv[1]) if l.strip()))' "$s.tls-rclone.tsv")
      echo "== $label: where the CPU of a cold HTTPS run goes (one run each, perf record -a -g at 999 Hz, machine-wide)"
      python3 contrib/bench/cpu-owners.py "$s.profile-agent.data" --comm emojiart-sync --hz 999 \
        --wall "$(tail -n1 "$s.profile-agent.wall")" ${target:+--target "$target"}
      python3 contrib/bench/cpu-owners.py "$s.profile-curl.data" --comm curl --hz 999 --wall "$(tail -n1 "$s.profile-curl.wall")"
    fi
  fi
  if wants agent; then
    python3 contrib/bench/scale-agent.py --agent "$bin/emojiart-sync" --server "$url" --feed "$dir/gallery/images" \
      --export "$dir" --runs "$runs" --deletes "$deletes" --window "$window" --cold-after "$cold_after" --label "$label"
  fi
}

make_certificates
echo "scale benchmark ($build_kind binaries) on $(nproc) cores, $(uname -sr); nginx $("$nginx_bin" -v 2>&1 | sed 's|.*/||'), $(curl --version | head -n1 | cut -d' ' -f1-2), $(rclone version 2>/dev/null | head -n1)"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"
bench full "$full_count" ""
bench small "$small_count" --small
echo
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
