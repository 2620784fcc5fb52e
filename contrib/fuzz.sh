#!/usr/bin/env bash
# Builds the libFuzzer harnesses for the two parsers of untrusted bytes and runs each for a bounded time:
#   feed  GalleryFeed.decode + AssetKey(feedURL:) + AssetFileName   (contrib/fuzz/FeedFuzzer.swift)
#   png   PNGValidator.validate, .structure and .full                 (contrib/fuzz/PNGFuzzer.swift)
# The harnesses are compiled with swiftc/clang straight from the sources (-sanitize=fuzzer,address), not by
# SwiftPM, so the normal build never needs the fuzzer runtime. Everything goes to .build-fuzz/:
#   .build-fuzz/<name>-fuzzer      the binary
#   .build-fuzz/corpus/<name>/     inputs libFuzzer found interesting (the seeds in Tests/Fuzz/corpus/<name>/
#                                  are read, never written)
#   .build-fuzz/crashers/<name>/   crash-*, leak-*, timeout-*, oom-* inputs; copy a real one to
#                                  Tests/Fuzz/crashers/<name>/ and add a regression test (docs/RELIABILITY.md)
# Usage: contrib/fuzz.sh [--seconds N] [--replay] [feed|png ...]     (default: 60 s each, both)
#   --replay   run the binaries once over the seeds and the kept crashers, no fuzzing (exit 0 = all pass)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
seconds=60
replay=0
targets=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --seconds) seconds=$2; shift 2 ;;
    --seconds=*) seconds=${1#*=}; shift ;;
    --replay) replay=1; shift ;;
    feed|png) targets+=("$1"); shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$1' (try --help)" >&2; exit 64 ;;
  esac
done
[[ ${#targets[@]} -gt 0 ]] || targets=(feed png)

out=$root/.build-fuzz
mkdir -p "$out/modules/CShims"
# CShims has no module map of its own (SwiftPM makes one); give swiftc one.
printf 'module CShims {\n    header "%s"\n    export *\n}\n' "$root/Sources/CShims/include/CShims.h" \
  > "$out/modules/CShims/module.modulemap"
swift_flags=(-parse-as-library -sanitize=fuzzer,address -O -g -swift-version 6 -use-ld=lld
  -enable-upcoming-feature ExistentialAny -enable-upcoming-feature MemberImportVisibility)

build() {
  local name=$1
  case $name in
    feed)
      nice -n 10 swiftc "${swift_flags[@]}" -module-name FeedFuzzer -I "$root/Sources/CCrypto" \
        contrib/fuzz/FeedFuzzer.swift Sources/EmojiArtSync/Feed/*.swift \
        Sources/EmojiArtSync/Support/SyncError.swift Sources/EmojiArtSync/Support/SHA256Digest.swift \
        Sources/EmojiArtSync/Storage/AssetFileName.swift -o "$out/feed-fuzzer"
      ;;
    png)
      nice -n 10 clang -c -O1 -g -fsanitize=fuzzer-no-link,address -I Sources/CShims/include \
        Sources/CShims/png_read.c -o "$out/png_read.o"
      nice -n 10 swiftc "${swift_flags[@]}" -module-name PNGFuzzer -I "$root/Sources/CPNG" -I "$out/modules/CShims" \
        contrib/fuzz/PNGFuzzer.swift Sources/EmojiArtPNG/*.swift "$out/png_read.o" -lpng16 -lz -o "$out/png-fuzzer"
      ;;
  esac
}

status=0
for name in "${targets[@]}"; do
  echo "== $name: building .build-fuzz/$name-fuzzer"
  build "$name"
  seeds=$root/Tests/Fuzz/corpus/$name
  kept=$root/Tests/Fuzz/crashers/$name
  mkdir -p "$out/corpus/$name" "$out/crashers/$name"
  max_len=8192; extra=()
  [[ $name == png ]] && max_len=65536
  [[ -f contrib/fuzz/$name.dict ]] && extra+=(-dict="$root/contrib/fuzz/$name.dict")
  if [[ $replay == 1 ]]; then
    inputs=("$seeds"/*)
    compgen -G "$kept/*" > /dev/null && inputs+=("$kept"/*)
    echo "== $name: replaying ${#inputs[@]} inputs"
    if "$out/$name-fuzzer" -runs=0 "${inputs[@]}" > "$out/$name-replay.log" 2>&1; then
      echo "== $name: all ${#inputs[@]} pass"
    else
      tail -40 "$out/$name-replay.log"; echo "== $name: REPLAY FAILED (log: .build-fuzz/$name-replay.log)"; status=1
    fi
    continue
  fi
  echo "== $name: fuzzing for $seconds s (nice 19); new inputs in .build-fuzz/corpus/$name"
  # Kept crashers are seeds too: the fuzzer starts by checking that they no longer fail.
  # -timeout=60, not 10: at nice 19 beside builds the fuzzer can be starved for over 10 s on an input that
  # takes 0.1 s (two such false timeouts on 2026-11-24, both replayed in 0.13 s); a real hang still shows.
  seed_dirs=("$seeds")
  compgen -G "$kept/*" > /dev/null && seed_dirs+=("$kept")
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1} \
    nice -n 19 "$out/$name-fuzzer" -max_total_time="$seconds" -timeout=60 -rss_limit_mb=2048 \
    -max_len=$max_len -print_final_stats=1 -artifact_prefix="$out/crashers/$name/" "${extra[@]}" \
    "$out/corpus/$name" "${seed_dirs[@]}" 2>&1 | tee "$out/$name.log" | grep -vE '^#[0-9]+.*(NEW|REDUCE|pulse)' || true
  if compgen -G "$out/crashers/$name/*" > /dev/null; then
    echo "== $name: FINDINGS in .build-fuzz/crashers/$name:"; ls -l "$out/crashers/$name"; status=1
  else
    echo "== $name: no crash"
  fi
done
exit $status
