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

/// A fingerprint in 8 bytes, for tables that hold one per key and only ever compare them (the catalogue keeps one
/// for each of a feed's 100,000 keys for as long as the agent runs: 0.8 MB instead of 4.8): SipHash of its fields
/// with the process's random seed (`Hasher`), so no file can be made to match another's digest on purpose, and two
/// different fingerprints share one by chance once in 2^64 comparisons.
struct FingerprintDigest: Sendable, Equatable {
    let value: UInt64

    init(_ fingerprint: FileFingerprint) {
        var hasher = Hasher()
        hasher.combine(fingerprint.device)
        hasher.combine(fingerprint.inode)
        hasher.combine(fingerprint.size)
        hasher.combine(fingerprint.modifiedNanoseconds)
        hasher.combine(fingerprint.changedNanoseconds)
        let value = UInt64(bitPattern: Int64(hasher.finalize()))
        self.value = value == Self.none ? 1 : value  // 0 marks "none" in a table (`init?(stored:)`)
    }

    /// The digest a table stored as `stored`, nil for its "none" (0).
    init?(stored: UInt64) {
        guard stored != Self.none else { return nil }
        value = stored
    }

    /// What a table stores for "no fingerprint recorded".
    static let none: UInt64 = 0
}
