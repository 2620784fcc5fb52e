#if canImport(Glibc)
import Glibc
#endif

/// Which file sits at a path (device, inode, and when the inode was born): what makes a file the agent's. The index
/// records the identity of every file the agent wrote or adopted, and a file at an asset path with another identity
/// is not the agent's, whatever its name and bytes: never renamed over, truncated or unlinked (docs/RELIABILITY.md,
/// "Ownership by identity"). A rename keeps a file's identity, so the agent's file a person moved away is still
/// recognised as the agent's (and left alone: it is no longer at an asset path).
///
/// The inode number alone does not tell two files apart over time: ext4 gives a new file the number of one deleted
/// a moment before, so `rm gallery_image_5.png` then a person's own `gallery_image_5.png` had the agent's identity,
/// and the repair replaced the person's bytes. The birth time (`statx`'s `btime`, in nanoseconds) differs. Where it
/// is not known on one side (a file system that does not report it, a row recorded before schema 4, a fingerprint,
/// which does not keep it) the two are compared by device and inode alone, as before.
struct FileIdentity: Sendable, Hashable, CustomStringConvertible {
    let device: UInt64
    let inode: UInt64
    /// When the inode was born, in nanoseconds since the epoch; nil when not known.
    let born: Int64?

    init(device: UInt64, inode: UInt64, born: Int64? = nil) {
        self.device = device
        self.inode = inode
        self.born = born
    }

    init(_ status: stat, born: Int64?) {
        self.init(device: UInt64(status.st_dev), inode: UInt64(status.st_ino), born: born)
    }

    /// The same file: the same device and inode, born at the same time where both birth times are known.
    static func == (a: FileIdentity, b: FileIdentity) -> Bool {
        guard a.device == b.device, a.inode == b.inode else { return false }
        guard let aBorn = a.born, let bBorn = b.born else { return true }
        return aBorn == bBorn
    }

    /// Device and inode only, so that identities equal by `==` (one birth time unknown) hash alike.
    func hash(into hasher: inout Hasher) {
        hasher.combine(device)
        hasher.combine(inode)
    }

    var description: String { "\(device):\(inode)" }
}
