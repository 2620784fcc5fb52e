#define _GNU_SOURCE
#include "CShims.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static pthread_once_t fault_once = PTHREAD_ONCE_INIT;
static int fault_renameat2_einval = 0;

/// Reads the test-only fault switch EMOJIART_SYNC_TEST_FAULT once per process.
static void read_fault_switch(void) {
    const char *faults = getenv("EMOJIART_SYNC_TEST_FAULT");
    fault_renameat2_einval = faults != NULL && strstr(faults, "renameat2-einval") != NULL;
}

int emojiart_rename_noreplace(int olddirfd, const char *from, int newdirfd, const char *to) {
    pthread_once(&fault_once, read_fault_switch);
    int status;
    if (fault_renameat2_einval) {
        errno = EINVAL;
        status = -1;
    } else {
        status = (int)syscall(SYS_renameat2, olddirfd, from, newdirfd, to, RENAME_NOREPLACE);
    }
    if (status == 0 || (errno != EINVAL && errno != ENOSYS)) return status;
    // No RENAME_NOREPLACE here: link(2) refuses an existing target (EEXIST), then drop the temporary name.
    if (linkat(olddirfd, from, newdirfd, to, 0) != 0) return -1;
    unlinkat(olddirfd, from, 0);
    return 0;
}

int emojiart_rename_exchange(int olddirfd, const char *from, int newdirfd, const char *to) {
    pthread_once(&fault_once, read_fault_switch);
    if (fault_renameat2_einval) {
        errno = EINVAL;
        return -1;
    }
    return (int)syscall(SYS_renameat2, olddirfd, from, newdirfd, to, RENAME_EXCHANGE);
}
