#define _GNU_SOURCE
#include "CShims.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

int emojiart_rename_noreplace(int olddirfd, const char *from, int newdirfd, const char *to) {
    return (int)syscall(SYS_renameat2, olddirfd, from, newdirfd, to, RENAME_NOREPLACE);
}
