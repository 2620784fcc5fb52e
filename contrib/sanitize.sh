#!/usr/bin/env bash
# Builds the package and its tests with a sanitizer and runs the suite (or the --filter you give) under it.
#   contrib/sanitize.sh thread  [--filter REGEX] [--skip-build]   ThreadSanitizer, scratch path .build-tsan
#   contrib/sanitize.sh address [--filter REGEX] [--skip-build]   AddressSanitizer, scratch path .build-asan
#   --no-mutex-annotations   TSan without the Mutex annotations, to see the false reports they remove
# Each sanitizer build is a full build of the package (15-30 minutes on 2 busy cores); later runs are incremental.
# TSan runs with contrib/sanitizers/mutex-tsan-annotations.c preloaded: without it every contended
# Synchronization.Mutex critical section is reported as a race (docs/RELIABILITY.md, "Sanitizers").
# Reports go to .build-<tsan|asan>/reports/<sanitizer>.<pid>; the script prints a summary and exits 1 if there
# are any. Exit status 64: usage.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
usage() { sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; }
[[ $# -ge 1 ]] || { usage >&2; exit 64; }
kind=$1; shift
filter=(); skip_build=0; annotate=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --filter) filter=(--filter "$2"); shift 2 ;;
    --skip-build) skip_build=1; shift ;;
    --no-mutex-annotations) annotate=0; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "sanitize.sh: unknown argument '$1'" >&2; exit 64 ;;
  esac
done
case $kind in
  thread) scratch=.build-tsan ;;
  address) scratch=.build-asan ;;
  -h|--help) usage; exit 0 ;;
  *) echo "sanitize.sh: the sanitizer is 'thread' or 'address', not '$kind'" >&2; exit 64 ;;
esac
reports=$root/$scratch/reports
mkdir -p "$reports"
rm -f "$reports"/*

if [[ $skip_build == 0 ]]; then
  start=$(date +%s)
  nice -n 10 swift build --build-tests --sanitize="$kind" --scratch-path "$scratch"
  echo "sanitize.sh: $kind build took $(( $(date +%s) - start )) s"
fi

preload=
if [[ $kind == thread ]]; then
  clang -shared -fPIC -O1 -g -Wall contrib/sanitizers/mutex-tsan-annotations.c -ldl \
    -o "$scratch/libmutex-tsan-annotations.so"
  [[ $annotate == 1 ]] && preload=$root/$scratch/libmutex-tsan-annotations.so
  export TSAN_OPTIONS="log_path=$reports/tsan halt_on_error=0 history_size=4 ${TSAN_OPTIONS:-}"
else
  # Leak checking is off: Foundation and the Swift runtime keep caches for the life of the process.
  export ASAN_OPTIONS="log_path=$reports/asan detect_leaks=0 ${ASAN_OPTIONS:-}"
fi

start=$(date +%s)
set +e
# The tests run one at a time, as in contrib/test.sh; LD_PRELOAD is empty for ASan.
LD_PRELOAD=$preload nice -n 10 swift test --skip-build --no-parallel --scratch-path "$scratch" "${filter[@]}"
test_status=$?
set -e
echo "sanitize.sh: $kind test run took $(( $(date +%s) - start )) s, swift test exit status $test_status"

if compgen -G "$reports/*" > /dev/null; then
  echo "sanitize.sh: $(cat "$reports"/* | grep -c '^SUMMARY:') report(s) in $scratch/reports:"
  cat "$reports"/* | grep '^SUMMARY:' | sort | uniq -c | sort -rn
  exit 1
fi
echo "sanitize.sh: no $kind sanitizer reports"
exit "$test_status"
