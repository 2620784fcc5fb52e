// Tells ThreadSanitizer about the locking that Synchronization.Mutex does out of its sight. For TSan runs only:
// contrib/sanitize.sh builds this into .build-tsan/libmutex-tsan-annotations.so and LD_PRELOADs it. It is
// never linked into the shipped binaries.
//
// Why: on Linux, Mutex.withLock is inlined into our (instrumented) code, including the fast paths, an atomic
// compare-and-swap on the lock word, which TSan sees. Under contention it calls two functions of the
// uninstrumented libswiftSynchronization.so, `_MutexHandle._lockSlow(_:)` (spin, futex wait, then take the
// lock) and `_MutexHandle._unlockSlow()` (release the lock, futex wake). The acquire and the release that happen
// in there are invisible, so TSan reports the critical sections of two threads as a race
// (contrib/sanitizers/MutexCounter.swift shows it). This file interposes exactly those two functions, calls
// the real ones, and adds the missing edges: __tsan_acquire(lock word) after _lockSlow, __tsan_release(lock
// word) before _unlockSlow. Nothing is suppressed: a race outside a critical section, or between a locked and
// an unlocked access, is still reported (contrib/sanitizers/PlantedRace.swift proves it).
//
// The functions use the Swift calling convention: `self` (the address of the lock word, a borrowed
// ~Copyable struct) travels in the swiftself register, which clang spells `swift_context`.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// Weak: LD_PRELOAD also reaches processes without the TSan runtime (swift test itself, which uses Mutex too);
// there they are NULL and the interposers only forward.
__attribute__((weak)) void __tsan_acquire(void *address);
__attribute__((weak)) void __tsan_release(void *address);

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

typedef __attribute__((swiftcall)) void (*lock_slow_fn)(uint32_t, void *__attribute__((swift_context)));
typedef __attribute__((swiftcall)) void (*unlock_slow_fn)(void *__attribute__((swift_context)));

static lock_slow_fn lock_slow;
static unlock_slow_fn unlock_slow;

/// The real function, or abort with a message: the interposers are only ever called by a Swift program that
/// uses Mutex, so the real ones must exist.
static void *require_real(void *function, const char *name) {
    if (function == NULL) {
        fprintf(stderr, "mutex-tsan-annotations: %s not found (has the toolchain changed?)\n", name);
        abort();
    }
    return function;
}

/// Resolves the real functions once, when the library is loaded, before any thread of the program runs. In
/// processes without Swift's Synchronization library (llvm-symbolizer, shells: LD_PRELOAD is inherited) they
/// stay NULL, harmlessly, since nothing there calls the interposers.
__attribute__((constructor)) static void resolve_real_functions(void) {
    lock_slow = (lock_slow_fn)dlsym(RTLD_NEXT, LOCK_SLOW);
    unlock_slow = (unlock_slow_fn)dlsym(RTLD_NEXT, UNLOCK_SLOW);
}

__attribute__((swiftcall)) void interposed_lock_slow(uint32_t thread_id, void *__attribute__((swift_context)) self)
    __asm__(LOCK_SLOW);
__attribute__((swiftcall)) void interposed_lock_slow(uint32_t thread_id, void *__attribute__((swift_context)) self) {
    ((lock_slow_fn)require_real((void *)lock_slow, LOCK_SLOW))(thread_id, self);
    if (__tsan_acquire != NULL) __tsan_acquire(self);
}

__attribute__((swiftcall)) void interposed_unlock_slow(void *__attribute__((swift_context)) self) __asm__(UNLOCK_SLOW);
__attribute__((swiftcall)) void interposed_unlock_slow(void *__attribute__((swift_context)) self) {
    if (__tsan_release != NULL) __tsan_release(self);
    ((unlock_slow_fn)require_real((void *)unlock_slow, UNLOCK_SLOW))(self);
}
