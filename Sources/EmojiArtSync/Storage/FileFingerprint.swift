#if canImport(Glibc)
import Glibc
#endif

/// Identity and version of a file as `lstat(2)` reports it: inode, size, modification and change times.
///
/// When a watched file's fingerprint is the one recorded when the agent last wrote or verified it, its
/// bytes are known good without hashing them again; this is how the agent's own renames, which inotify
/// reports like anyone else's, never trigger repairs. Any change (rewrite in place, replacement by rename,
/// truncation, touch) gives a new fingerprint and a real check.
public struct FileFingerprint: Sendable, Equatable {
    public let device: UInt64
    public let inode: UInt64
    public let size: Int64
    public let modified: timespec
    public let changed: timespec

    /// The fingerprint of the regular file at `path`, or nil if there is none (absent, a symlink, a directory).
    public static func of(_ path: String) -> FileFingerprint? {
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
        return FileFingerprint(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            modified: info.st_mtim, changed: info.st_ctim)
    }

    public static func == (lhs: FileFingerprint, rhs: FileFingerprint) -> Bool {
        lhs.device == rhs.device && lhs.inode == rhs.inode && lhs.size == rhs.size
            && lhs.modified.tv_sec == rhs.modified.tv_sec && lhs.modified.tv_nsec == rhs.modified.tv_nsec
            && lhs.changed.tv_sec == rhs.changed.tv_sec && lhs.changed.tv_nsec == rhs.changed.tv_nsec
    }
}
