#define _GNU_SOURCE
#include "CShims.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t fault_once = PTHREAD_ONCE_INIT;
static int fault_no_unnamed_files = 0;

/// Reads the test-only fault switch EMOJIART_SYNC_TEST_FAULT once per process.
static void read_fault_switch(void) {
    const char *faults = getenv("EMOJIART_SYNC_TEST_FAULT");
    fault_no_unnamed_files = faults != NULL && strstr(faults, "o-tmpfile-eopnotsupp") != NULL;
}

int emojiart_open_unnamed_file(const char *directory) {
    pthread_once(&fault_once, read_fault_switch);
    if (fault_no_unnamed_files) {
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
