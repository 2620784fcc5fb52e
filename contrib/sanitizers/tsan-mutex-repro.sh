#!/usr/bin/env bash
# Shows the TSan/Mutex problem and its fix in under a minute, without building the package:
#  1. MutexCounter.swift (a counter touched only inside Mutex.withLock) is reported as a race by plain TSan;
#  2. with mutex-tsan-annotations.c preloaded it is not;
#  3. PlantedRace.swift (the same plus an unlocked global) is still reported with the annotations preloaded.
# Exit status 0 when all three hold. Binaries go to .build-tsan-repro/.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=.build-tsan-repro
mkdir -p "$out"
swiftc -parse-as-library -sanitize=thread -g -swift-version 6 contrib/sanitizers/MutexCounter.swift -o "$out/mutex-counter" || exit 1
swiftc -parse-as-library -sanitize=thread -g -swift-version 6 contrib/sanitizers/PlantedRace.swift -o "$out/planted-race" || exit 1
clang -shared -fPIC -O1 -g -Wall contrib/sanitizers/mutex-tsan-annotations.c -ldl -o "$out/libmutex-tsan-annotations.so" || exit 1
preload=$PWD/$out/libmutex-tsan-annotations.so
count() { grep -c '^WARNING: ThreadSanitizer' || true; }
plain=$("$out/mutex-counter" 2>&1 | count)
annotated=$(LD_PRELOAD=$preload "$out/mutex-counter" 2>&1 | count)
planted=$(LD_PRELOAD=$preload "$out/planted-race" 2>&1 | count)
echo "Mutex-only counter, plain TSan:          $plain report(s)   (expected: 1 or more, the false positive)"
echo "Mutex-only counter, with annotations:    $annotated report(s)   (expected: 0)"
echo "planted race, with annotations:          $planted report(s)   (expected: 1 or more)"
[[ $annotated == 0 && $planted -ge 1 ]]
