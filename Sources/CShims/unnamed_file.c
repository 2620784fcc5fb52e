#define _GNU_SOURCE
#include "CShims.h"
#include "test_fault.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int emojiart_open_unnamed_file(const char *directory) {
    if (emojiart_c_fault_on(EMOJIART_FAULT_NO_UNNAMED_FILES)) {
        errno = EOPNOTSUPP;
        return -1;
    }
    return open(directory, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
}

/// 0 until AT_EMPTY_PATH was found not to work for this process (it needs CAP_DAC_READ_SEARCH), then 1.
static int empty_path_refused = 0;

int emojiart_link_unnamed_file(int fd, int directory, const char *name) {
    // AT_EMPTY_PATH links the descriptor itself, but only with CAP_DAC_READ_SEARCH (ENOENT without it);
    // /proc/self/fd/N names the same file for anyone who may open it (open(2), O_TMPFILE).
    if (!__atomic_load_n(&empty_path_refused, __ATOMIC_RELAXED)) {
        if (linkat(fd, "", directory, name, AT_EMPTY_PATH) == 0) return 0;
        if (errno != ENOENT) return -1;
    }
    char proc[64];
    snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, proc, directory, name, AT_SYMLINK_FOLLOW) != 0) return -1;
    __atomic_store_n(&empty_path_refused, 1, __ATOMIC_RELAXED);
    return 0;
}
