#if canImport(Glibc)
import Glibc
#endif

/// Which file (device and inode) sits at a path: what makes a file the agent's. The index records the identity
/// of every file the agent wrote or adopted, and a file at an asset path with another identity is not the
/// agent's, whatever its name and bytes: never renamed over, truncated or unlinked (docs/RELIABILITY.md,
/// "Ownership by identity"). A rename keeps a file's identity, so the agent's file a person moved away is still
/// recognised as the agent's (and left alone: it is no longer at an asset path).
struct FileIdentity: Sendable, Hashable, CustomStringConvertible {
    let device: UInt64
    let inode: UInt64

    init(device: UInt64, inode: UInt64) {
        self.device = device
        self.inode = inode
    }

    init(_ status: stat) {
        self.init(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
    }

    var description: String { "\(device):\(inode)" }
}
