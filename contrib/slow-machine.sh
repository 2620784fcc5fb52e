#!/usr/bin/env bash
# Runs the test suite as a slow 2-core machine would: the test process and every agent and gallery it starts
# get a fraction of the CPU (a cgroup quota), and each fsync(2) waits a fixed time behind a one-at-a-time
# lock (an LD_PRELOAD shim, contrib/slow-machine/slow-fsync.c). The build itself runs at full speed first.
#
#   contrib/slow-machine.sh [--cpu 0.5] [--fsync-ms 20] [--serial [swift test options]]
#
# Without --serial the suite runs as contrib/test.sh runs it (two shards at once, contrib/run-tests.sh);
# --serial runs it in one process, and takes swift test options such as --filter BackgroundAgentTests.
#
# --cpu is in cores (0.5: half of one core for everything, four times less than an idle 2-core machine).
# Needs root (a cgroup of its own, v1 or v2). Used to prove the suite's time limits leave room for slow
# machines: docs/RELIABILITY.md, "Slow machines".
set -euo pipefail
cd "$(dirname "$0")/.."
cpu=0.5
fsync_ms=20
while [ $# -gt 0 ]; do
  case "$1" in
    --cpu) cpu=$2; shift 2 ;;
    --fsync-ms) fsync_ms=$2; shift 2 ;;
    *) break ;;
  esac
done
[ "$(id -u)" -eq 0 ] || { echo "slow-machine: needs root to make a cgroup" >&2; exit 1; }

contrib/install-deps.sh
swift build --build-tests

work=$(mktemp -d)
shim=$work/slow-fsync.so
cc -shared -fPIC -O2 -o "$shim" contrib/slow-machine/slow-fsync.c -ldl -lpthread
period=100000
quota=$(awk -v c="$cpu" -v p="$period" 'BEGIN { q = int(c * p); if (q < 1000) q = 1000; print q }')
name=emojiart-slow-$$
if [ -f /sys/fs/cgroup/cgroup.controllers ]; then  # cgroup v2
  group=/sys/fs/cgroup/$name
  echo +cpu > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
  mkdir "$group"
  echo "$quota $period" > "$group/cpu.max"
else  # cgroup v1
  group=/sys/fs/cgroup/cpu/$name
  mkdir "$group"
  echo "$period" > "$group/cpu.cfs_period_us"
  echo "$quota" > "$group/cpu.cfs_quota_us"
fi
cleanup() { rmdir "$group" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

echo "slow-machine: tests with $cpu cores of CPU (quota $quota/$period us) and fsync $fsync_ms ms (one at a time)" >&2
start=$(date +%s)
status=0
bash -c 'echo $$ > "$1/cgroup.procs"; shift; exec "$@"' _ "$group" \
  env LD_PRELOAD="$shim" SLOW_FSYNC_MS="$fsync_ms" contrib/run-tests.sh "$@" || status=$?
echo "slow-machine: the suite took $(( $(date +%s) - start )) s and exited $status" >&2
exit "$status"
