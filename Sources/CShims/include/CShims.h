#ifndef EMOJIART_CSHIMS_H
#define EMOJIART_CSHIMS_H
#include <stddef.h>
#include <stdint.h>

/// renameat2(2) with RENAME_NOREPLACE: rename `from` to `to` only if `to` does not exist.
/// Returns 0, or -1 with errno set (EEXIST when `to` exists). On a file system without RENAME_NOREPLACE
/// (EINVAL) it falls back to link(2) + unlink(2) of `from`, which gives the same guarantee (link fails with
/// EEXIST when `to` exists). Test-only fault switch: the environment variable EMOJIART_SYNC_TEST_FAULT
/// containing `renameat2-einval` (read once per process) makes every renameat2 fail with EINVAL.
int emojiart_rename_noreplace(int olddirfd, const char *from, int newdirfd, const char *to);

/// renameat2(2) with RENAME_EXCHANGE: swaps `from` and `to` atomically (both must exist). Returns 0, or -1 with
/// errno set (ENOENT when either is gone; EINVAL or ENOSYS where the file system or kernel cannot exchange, and
/// always EINVAL under the `renameat2-einval` test fault: the caller then takes the old file away first).
int emojiart_rename_exchange(int olddirfd, const char *from, int newdirfd, const char *to);

// MARK: - File status with the birth time (status.c)

struct stat;

/// fstatat(2) of `path` relative to `dirfd` with `flags` (AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH for `dirfd` itself),
/// made through statx(2), which also reports when the inode was born: a number the file system gives a new file
/// even where it reuses a deleted file's inode number at once (ext4 does). `out` gets what fstatat gives; `born_ns`
/// the birth time in nanoseconds since the epoch and `has_born` 1, or `has_born` 0 where the file system does not
/// report one (or the kernel has no statx: then fstatat itself is called). Returns 0, or -1 with errno set.
int emojiart_status_at(int dirfd, const char *path, int flags, struct stat *out, int64_t *born_ns, int *has_born);

/// emojiart_status_at of the file open as `fd` itself (AT_EMPTY_PATH, which Swift's Glibc module does not export).
int emojiart_status_of(int fd, struct stat *out, int64_t *born_ns, int *has_born);

// MARK: - Group commit (sync.c)

/// syncfs(2) on the file system holding `fd`: every dirty page and inode of that file system reaches the disk,
/// and the disk's cache is flushed. One call makes a whole batch of new files durable (Swift's Glibc module
/// does not export it: it is behind _GNU_SOURCE). Returns 0, or -1 with errno set.
int emojiart_syncfs(int fd);

// MARK: - Files with no name yet (unnamed_file.c)

/// open(2) with O_TMPFILE, O_WRONLY and O_CLOEXEC (mode 0644): a new file in the file system of `directory` that has
/// no name, so nothing in `directory` shows it until it is linked (Swift's Glibc module does not export O_TMPFILE).
/// Returns the descriptor, or -1 with errno set (EOPNOTSUPP or EISDIR where the file system or kernel has none).
/// Test-only fault switch: EMOJIART_SYNC_TEST_FAULT containing `o-tmpfile-eopnotsupp` (read once per process)
/// makes every call fail with EOPNOTSUPP.
int emojiart_open_unnamed_file(const char *directory);

/// Gives the unnamed file open as `fd` (from emojiart_open_unnamed_file) the name `name`, relative to the directory
/// descriptor `directory` (or AT_FDCWD), with linkat(2): through AT_EMPTY_PATH, else through /proc/self/fd (once
/// AT_EMPTY_PATH is found to need a capability the process lacks, only through /proc). Like a rename with
/// RENAME_NOREPLACE it never replaces anything. Returns 0, or -1 with errno set (EEXIST when `name` exists).
int emojiart_link_unnamed_file(int fd, int directory, const char *name);

// MARK: - Who lists DIR (directory_listing.c)

/// What another process did to DIR itself since the last read, as one record of `emojiart_listing_monitor_read`
/// reports it: a bit set of these. The kernel merges a process's events on DIR while they wait to be read, so one
/// record may hold an open, reads and a close, in an order it no longer tells.
enum {
    /// DIR was opened (`rm -rf DIR` opens it before it lists it).
    EMOJIART_LISTING_OPEN = 1,
    /// DIR was read (`getdents`: a listing, or part of one).
    EMOJIART_LISTING_READ = 2,
    /// A descriptor of DIR was closed (its last one, in the process that held it).
    EMOJIART_LISTING_CLOSE = 4,
    /// The kernel's queue overflowed: events were lost.
    EMOJIART_LISTING_OVERFLOW = 8,
    /// An entry of DIR was deleted (`rm -rf DIR` deletes right after its listing).
    EMOJIART_LISTING_DELETE = 16,
};

/// One record: what another process did (the bits above). Which process is not kept: fanotify reports 0 for
/// another user's process to a listener without privilege, so nothing may depend on it.
struct emojiart_listing_event {
    int32_t what;
};

/// fanotify(7) with an inode mark on the directory at `directory` (a symbolic link is not followed): opens, reads (listings) and closes of that
/// directory itself, and deletions of its entries, never events of the files in it. Needs no privilege from Linux 5.13 (FAN_REPORT_FID, inode marks).
/// Returns a non-blocking descriptor, or -1 with errno set (EPERM on an older kernel without CAP_SYS_ADMIN, ENOSYS,
/// EXDEV or EOPNOTSUPP on a file system without file handles). Test-only fault switch: EMOJIART_SYNC_TEST_FAULT
/// containing `fanotify-eperm` (read once per process) makes it fail with EPERM.
int emojiart_listing_monitor_open(const char *directory);

/// Reads, without blocking, up to `capacity` records from `fd` (from emojiart_listing_monitor_open) into `events`, in
/// the order they happened, leaving out those of the process `own_pid`. Returns how many were stored (0: none
/// queued), or -1 with errno.
int emojiart_listing_monitor_read(int fd, int32_t own_pid, struct emojiart_listing_event *events, int capacity);

// MARK: - Wake-up descriptor (eventfd.c)

/// eventfd(2) with a zero counter, EFD_CLOEXEC and EFD_NONBLOCK: a descriptor that a write of 8 bytes makes
/// readable, to wake a thread out of poll(2) (Swift's Glibc module has no <sys/eventfd.h>). Returns the
/// descriptor, or -1 with errno set.
int emojiart_wake_eventfd(void);

// MARK: - Open-file-description locks (lock.c)

/// fcntl(F_OFD_SETLK) with a write lock over the whole file. 0, or -1 with errno (EAGAIN/EACCES: held).
/// The kernel drops it when the last descriptor of this open file description closes (the process dies).
int emojiart_ofd_lock_exclusive(int fd);
/// fcntl(F_OFD_SETLK) with F_UNLCK over the whole file.
int emojiart_ofd_unlock(int fd);
/// fcntl(F_OFD_GETLK): 1 when another open file description holds a lock on the file, 0 when none does,
/// -1 with errno on error. Takes no lock itself (the reported l_pid is -1 for OFD locks; the PID is in the file).
int emojiart_ofd_is_locked(int fd);

// MARK: - Build (build_info.c)

/// The source commit the binary was built from, as the Makefile's build passed it (`git describe --always
/// --dirty`), or "" when it was built without it (a plain `swift build`).
const char *emojiart_build_commit(void);

// MARK: - Heap (memory.c)

/// glibc's malloc_trim(0): hands the free memory of every malloc arena back to the kernel. After a pass over a
/// large feed the freed memory stays mapped in the arenas of the threads that allocated it (RSS grew by 10-20 MiB
/// per full pass at 20,000 assets, and one malloc_trim gave back 88 MiB). Returns 1 if memory was released.
int emojiart_release_free_heap(void);

// MARK: - libpng reading behind setjmp (png_read.c)

/// How `emojiart_png_read` ended. libpng reports errors by `longjmp`, which Swift frames cannot survive,
/// so the `setjmp` lives in C and Swift sees only this code plus the message in the result.
typedef enum emojiart_png_status {
    /// Every requested step succeeded.
    EMOJIART_PNG_OK = 0,
    /// `png_create_read_struct`, `png_create_info_struct` or the row buffer allocation returned NULL.
    EMOJIART_PNG_OUT_OF_MEMORY = 1,
    /// libpng called its error function inside `png_read_info` (signature, IHDR, PLTE, ... up to the first IDAT).
    EMOJIART_PNG_INFO_FAILED = 2,
    /// libpng called its error function while decoding rows (`png_read_row`).
    EMOJIART_PNG_ROWS_FAILED = 3,
    /// libpng called its error function inside `png_read_end` (the rest of the zlib stream, chunks after IDAT).
    EMOJIART_PNG_END_FAILED = 4,
    /// `emojiart_png_read_file` only: `pread` of the file failed (`read_errno` says why).
    EMOJIART_PNG_READ_FAILED = 5,
} emojiart_png_status;

/// Limits and mode for one `emojiart_png_read` call. Plain values; the caller owns it.
typedef struct emojiart_png_read_options {
    /// Passed to `png_set_user_limits`: libpng refuses an IHDR wider or taller than this.
    uint32_t max_width;
    uint32_t max_height;
    /// Passed to `png_set_chunk_malloc_max`: the most bytes libpng allocates for one ancillary chunk,
    /// decompressed (zTXt, iTXt, iCCP) or not.
    uint32_t max_chunk_malloc;
    /// Passed to `png_set_chunk_cache_max`: how many ancillary chunks (text, sPLT, unknown) libpng keeps.
    uint32_t max_cached_chunks;
    /// 0: stop after `png_read_info`. Non-zero: also decode every row of every interlace pass into one
    /// row buffer (constant memory), then `png_read_end`. From the rows on, libpng's "benign" errors
    /// (zlib checksum mismatch, too much or too little image data) are errors.
    int decode_rows;
} emojiart_png_read_options;

/// What `emojiart_png_read` found. Filled in on every return; strings are always NUL-terminated.
typedef struct emojiart_png_read_result {
    /// IHDR as libpng read it (`png_get_IHDR`); zero when `png_read_info` failed.
    uint32_t width;
    uint32_t height;
    uint8_t bit_depth;
    uint8_t color_type;
    uint8_t interlace_method;
    /// Number of interlace passes decoded (1, or 7 for Adam7); 0 when rows were not decoded.
    uint8_t passes;
    /// Rows handed out by `png_read_row`, summed over passes.
    uint64_t rows_decoded;
    /// The chunk libpng was reading when it failed, as four ASCII bytes big-endian
    /// (`png_get_io_chunk_type`); 0 when no chunk was being read.
    uint32_t failed_chunk;
    /// libpng's error message (`png_error`), empty on success.
    char message[192];
    /// The first warning libpng issued (`png_warning`), empty if none. libpng's IHDR check warns with the
    /// precise reason ("Invalid bit depth in IHDR") and then fails with a generic "Invalid IHDR data".
    char first_warning[192];
    /// `emojiart_png_read_file` only: the errno of the `pread` that failed, 0 when none did.
    int read_errno;
} emojiart_png_read_result;

/// Reads the PNG in `bytes[0..<count]` with libpng's classic API from memory (`png_set_read_fn`):
/// `png_read_info`, and when `options->decode_rows` is set, every row (`png_read_row`, with
/// `png_set_interlace_handling`) and `png_read_end`. CRC errors in critical and ancillary chunks are errors
/// (`png_set_crc_action` with `PNG_CRC_ERROR_QUIT`). Warnings never stop the read.
/// Thread-safe: every call has its own libpng structures and jump buffer. Never longjmps out.
emojiart_png_status emojiart_png_read(const uint8_t *bytes, size_t count,
                                      const emojiart_png_read_options *options,
                                      emojiart_png_read_result *result);

/// `emojiart_png_read` for the PNG in the open file `fd`, from its start: libpng reads it with `pread` through
/// one 64 KiB buffer (the file's offset is left alone), so memory does not grow with the file's size. A failed
/// `pread` ends the read with `EMOJIART_PNG_READ_FAILED` and its errno in `result->read_errno`; the end of the
/// file where libpng wants more is a libpng error, as the end of the bytes is for `emojiart_png_read`.
emojiart_png_status emojiart_png_read_file(int fd, const emojiart_png_read_options *options,
                                           emojiart_png_read_result *result);

#endif
