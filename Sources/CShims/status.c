#define _GNU_SOURCE
#include "CShims.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

int emojiart_status_at(int dirfd, const char *path, int flags, struct stat *out, int64_t *born_ns, int *has_born) {
    struct statx x;
    *has_born = 0;
    if (statx(dirfd, path, flags | AT_STATX_SYNC_AS_STAT, STATX_BASIC_STATS | STATX_BTIME, &x) != 0) {
        if (errno != ENOSYS && errno != EPERM) return -1;  // EPERM: a seccomp filter of older container runtimes
        return fstatat(dirfd, path, out, flags);
    }
    *out = (struct stat){0};
    out->st_dev = makedev(x.stx_dev_major, x.stx_dev_minor);
    out->st_ino = x.stx_ino;
    out->st_mode = x.stx_mode;
    out->st_nlink = x.stx_nlink;
    out->st_uid = x.stx_uid;
    out->st_gid = x.stx_gid;
    out->st_rdev = makedev(x.stx_rdev_major, x.stx_rdev_minor);
    out->st_size = (off_t)x.stx_size;
    out->st_blksize = (blksize_t)x.stx_blksize;
    out->st_blocks = (blkcnt_t)x.stx_blocks;
    out->st_atim.tv_sec = x.stx_atime.tv_sec;
    out->st_atim.tv_nsec = x.stx_atime.tv_nsec;
    out->st_mtim.tv_sec = x.stx_mtime.tv_sec;
    out->st_mtim.tv_nsec = x.stx_mtime.tv_nsec;
    out->st_ctim.tv_sec = x.stx_ctime.tv_sec;
    out->st_ctim.tv_nsec = x.stx_ctime.tv_nsec;
    if (x.stx_mask & STATX_BTIME) {
        *born_ns = (int64_t)x.stx_btime.tv_sec * 1000000000 + x.stx_btime.tv_nsec;
        *has_born = 1;
    }
    return 0;
}

int emojiart_status_of(int fd, struct stat *out, int64_t *born_ns, int *has_born) {
    return emojiart_status_at(fd, "", AT_EMPTY_PATH, out, born_ns, has_born);
}
