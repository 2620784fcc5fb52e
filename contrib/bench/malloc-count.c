// Counts heap allocations for contrib/bench/log-write.sh: preloaded (LD_PRELOAD) into LogWriteBench, it
// forwards malloc, calloc, realloc, posix_memalign and aligned_alloc to glibc and counts each call;
// emojiart_malloc_count() (found with dlsym) returns the count so far, all threads together.
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static _Atomic unsigned long long count;

static void counted(void) { atomic_fetch_add_explicit(&count, 1, memory_order_relaxed); }

void *malloc(size_t size) { counted(); return __libc_malloc(size); }
void *calloc(size_t items, size_t size) { counted(); return __libc_calloc(items, size); }
void *realloc(void *old, size_t size) { counted(); return __libc_realloc(old, size); }
void *aligned_alloc(size_t alignment, size_t size) { counted(); return __libc_memalign(alignment, size); }
int posix_memalign(void **result, size_t alignment, size_t size) {
    counted();
    void *memory = __libc_memalign(alignment, size);
    if (!memory) return ENOMEM;
    *result = memory;
    return 0;
}

unsigned long long emojiart_malloc_count(void) { return atomic_load_explicit(&count, memory_order_relaxed); }
