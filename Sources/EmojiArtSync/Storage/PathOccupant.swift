#if canImport(Glibc)
import Glibc
#endif

/// What sits at an asset's path, as ``FileStatus`` sees it (nothing is followed or opened), in the detail the
/// agent needs to decide whether it may write there and to report a conflict once.
///
/// The agent writes only by renaming a file of its own into place, and only over an absent path or a regular
/// file. A FIFO, socket, device or directory is never opened (opening a FIFO blocks), and a regular file
/// with more than one name that the agent did not write is a hard link to someone's data: never adopted.
struct PathOccupant: Sendable, Equatable {
    enum Kind: String, Sendable {
        case absent, regular, symbolicLink = "symbolic link", directory, fifo = "FIFO", socket, device, unknown
    }

    let kind: Kind
    /// Names of the inode (`st_nlink`); 0 when absent.
    let links: Int
    /// Device and inode, so a report names this very object: another one at the same path is reported anew.
    let identity: String

    /// Nothing at the path: the agent may write there.
    static let absent = PathOccupant(kind: .absent, links: 0, identity: "")

    private init(kind: Kind, links: Int, identity: String) {
        self.kind = kind
        self.links = links
        self.identity = identity
    }

    /// What a status says is there (read through ``FileStatus/occupant``).
    init(_ info: stat) {
        let kind: Kind
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .regular
        case S_IFLNK: kind = .symbolicLink
        case S_IFDIR: kind = .directory
        case S_IFIFO: kind = .fifo
        case S_IFSOCK: kind = .socket
        case S_IFCHR, S_IFBLK: kind = .device
        default: kind = .unknown
        }
        self.init(kind: kind, links: Int(info.st_nlink), identity: FileIdentity(info, born: nil).description)
    }

    /// Why the agent must not write at this path, or nil when it may. `owned`: the manifest records the
    /// agent's file here (its own file, even with extra names the user gave it, is replaced by rename, never
    /// written through).
    func refusal(owned: Bool) -> String? {
        switch kind {
        case .absent: return nil
        case .regular: return owned || links <= 1 ? nil : "a hard link to a file with \(links) names"
        case .symbolicLink: return "a symbolic link"
        case .directory: return "a directory"
        case .fifo: return "a FIFO"
        case .socket: return "a socket"
        case .device: return "a device"
        case .unknown: return "not a regular file"
        }
    }
}
