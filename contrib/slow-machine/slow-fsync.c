/* An LD_PRELOAD shim for contrib/slow-machine.sh: every fsync(2) and fdatasync(2) of the process first waits
 * SLOW_FSYNC_MS milliseconds (default 20) while holding one process-wide lock, as a disk that flushes one
 * request at a time would make it wait; then the real call runs. Nothing else changes. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t disk = PTHREAD_MUTEX_INITIALIZER;

static void slow_flush(void) {
    static long ms = -1;
    if (ms < 0) { const char *v = getenv("SLOW_FSYNC_MS"); ms = v ? atol(v) : 20; }
    struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
    pthread_mutex_lock(&disk);
    while (nanosleep(&t, &t) != 0) {}
    pthread_mutex_unlock(&disk);
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    slow_flush();
    return real(fd);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    slow_flush();
    return real(fd);
}
