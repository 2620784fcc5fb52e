#define _GNU_SOURCE
#include "CShims.h"
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

static struct flock whole_file(short type) {
    struct flock lock;
    memset(&lock, 0, sizeof lock);  // l_pid must be 0 for open-file-description locks
    lock.l_type = type;
    lock.l_whence = SEEK_SET;
    lock.l_start = 0;
    lock.l_len = 0;  // to the end of the file, however long it grows
    return lock;
}

int emojiart_ofd_lock_exclusive(int fd) {
    struct flock lock = whole_file(F_WRLCK);
    return fcntl(fd, F_OFD_SETLK, &lock);
}

int emojiart_ofd_unlock(int fd) {
    struct flock lock = whole_file(F_UNLCK);
    return fcntl(fd, F_OFD_SETLK, &lock);
}

int emojiart_ofd_is_locked(int fd) {
    struct flock lock = whole_file(F_WRLCK);
    if (fcntl(fd, F_OFD_GETLK, &lock) != 0) return -1;
    return lock.l_type != F_UNLCK;
}
