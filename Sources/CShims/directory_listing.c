#define _GNU_SOURCE
#include "CShims.h"
#include "test_fault.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/fanotify.h>
#include <unistd.h>

int emojiart_listing_monitor_open(const char *directory) {
    if (emojiart_c_fault_on(EMOJIART_FAULT_NO_FANOTIFY)) {
        errno = EPERM;
        return -1;
    }
    // FAN_REPORT_FID: what lets a process without CAP_SYS_ADMIN use fanotify (Linux 5.13), with inode marks only.
    int fd = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_REPORT_FID, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    // An inode mark without FAN_EVENT_ON_CHILD: events on DIR itself, never on the files in it. FAN_ONDIR: DIR is a
    // directory (without it, events on directories are not reported). FAN_DELETE: an entry of DIR was deleted (a
    // directory-entry event, reported on DIR's mark with FAN_REPORT_FID), in the same queue as the listings.
    uint64_t mask = FAN_OPEN | FAN_ACCESS | FAN_CLOSE_NOWRITE | FAN_DELETE | FAN_ONDIR;
    if (fanotify_mark(fd, FAN_MARK_ADD | FAN_MARK_ONLYDIR | FAN_MARK_DONT_FOLLOW, mask, AT_FDCWD, directory) != 0) {
        int code = errno;
        close(fd);
        errno = code;
        return -1;
    }
    return fd;
}

int emojiart_listing_monitor_read(int fd, int32_t own_pid, struct emojiart_listing_event *events, int capacity) {
    // Aligned for the kernel's records (struct fanotify_event_metadata and the info records after it).
    char buffer[4096] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
    int count = 0;
    while (count < capacity) {
        // At most what fits in the caller's array: a record read is never dropped.
        size_t room = (size_t)(capacity - count) * (sizeof(struct fanotify_event_metadata) + 64);
        ssize_t length = read(fd, buffer, room < sizeof buffer ? room : sizeof buffer);
        if (length < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN) return count;
            return count > 0 ? count : -1;
        }
        if (length == 0) return count;
        struct fanotify_event_metadata *event = (struct fanotify_event_metadata *)buffer;
        while (FAN_EVENT_OK(event, length)) {
            if (event->vers == FANOTIFY_METADATA_VERSION) {
                // With FAN_REPORT_FID, event->fd is FAN_NOFD: no descriptor to close.
                if (event->fd >= 0) close(event->fd);
                int32_t what = 0;
                if (event->mask & FAN_Q_OVERFLOW) what |= EMOJIART_LISTING_OVERFLOW;
                if (event->pid != own_pid) {
                    if (event->mask & FAN_OPEN) what |= EMOJIART_LISTING_OPEN;
                    if (event->mask & FAN_ACCESS) what |= EMOJIART_LISTING_READ;
                    if (event->mask & FAN_CLOSE_NOWRITE) what |= EMOJIART_LISTING_CLOSE;
                    if (event->mask & FAN_DELETE) what |= EMOJIART_LISTING_DELETE;
                }
                if (what != 0 && count < capacity) events[count++] = (struct emojiart_listing_event){ .what = what };
            }
            event = FAN_EVENT_NEXT(event, length);
        }
    }
    return count;
}
