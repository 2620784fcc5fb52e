#define _GNU_SOURCE
#include "CShims.h"
#include "test_fault.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

int emojiart_rename_noreplace(int olddirfd, const char *from, int newdirfd, const char *to) {
    int status;
    if (emojiart_c_fault_on(EMOJIART_FAULT_RENAMEAT2_EINVAL)) {
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
    if (emojiart_c_fault_on(EMOJIART_FAULT_RENAMEAT2_EINVAL)) {
        errno = EINVAL;
        return -1;
    }
    return (int)syscall(SYS_renameat2, olddirfd, from, newdirfd, to, RENAME_EXCHANGE);
}
