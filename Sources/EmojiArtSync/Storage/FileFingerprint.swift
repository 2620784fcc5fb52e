#if canImport(Glibc)
import Glibc
#endif

/// Identity and version of a file as `lstat(2)` reports it: device, inode, size, modification and change
/// times in nanoseconds.
///
/// When a file's fingerprint is the one recorded when the agent last wrote or verified it, its bytes are
/// known good without hashing them again: this is how the agent's own renames, which inotify reports like
/// anyone else's, never trigger repairs, and how a warm start costs one `lstat` per file. Any change (rewrite
/// in place, replacement by rename, truncation, touch, even `touch -r` to put the old mtime back, which still
/// moves ctime) gives a new fingerprint and a real check. Bit rot that keeps the fingerprint is what the
/// scrub is for. Persisted in the index.
struct FileFingerprint: Sendable, Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modifiedNanoseconds: Int64
    let changedNanoseconds: Int64

    init(device: UInt64, inode: UInt64, size: Int64, modifiedNanoseconds: Int64, changedNanoseconds: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modifiedNanoseconds = modifiedNanoseconds
        self.changedNanoseconds = changedNanoseconds
    }

    /// The fingerprint in `info`, nil when it is not a regular file's (read through ``FileStatus/fingerprint``).
    init?(regular info: stat) {
        guard (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        self.init(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modifiedNanoseconds: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
            changedNanoseconds: Int64(info.st_ctim.tv_sec) * 1_000_000_000 + Int64(info.st_ctim.tv_nsec))
    }

    /// Which file this is (device and inode), whatever its bytes and times.
    var identity: FileIdentity { FileIdentity(device: device, inode: inode) }
}
