#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Which directory DIR and its state directory are (device and inode, `stat(2)`), taken when the agent starts,
/// so it can tell that the folder it works on is gone even where inotify says nothing: DIR removed
/// (`rm -rf DIR`, perhaps followed by `mkdir DIR`), moved away (`mv DIR DIR.old`), replaced by a symbolic link
/// to elsewhere, or its state directory removed. DIR is followed if it is a symbolic link from the start, so a
/// link that is there all along is fine; one that replaces DIR points at another directory, and that counts.
struct DirectoryIdentity: Sendable, Equatable {
    private struct FileID: Equatable {
        var device: UInt64
        var inode: UInt64
    }

    private let root: FileID
    private let state: FileID

    /// The identity of `directory` now; nil when DIR or its state directory cannot be `stat`ed.
    init?(of directory: SyncDirectory) {
        guard case .found(let root) = Self.id(of: directory.root),
              case .found(let state) = Self.id(of: directory.stateDirectory)
        else { return nil }
        self.root = root
        self.state = state
    }

    /// Why `directory` is no longer the folder this identity was taken of, in words for the log; nil while it is.
    func change(in directory: SyncDirectory) -> String? {
        switch Self.id(of: directory.root) {
        // A path that is no longer there says nothing of how it went: `mv DIR DIR.old` and `rm -rf DIR` both
        // leave it missing (inotify tells them apart when its event comes first: WatchService).
        case .missing: return "\(directory.root) is no longer there (removed or moved away)"
        case .found(let now) where now != root:
            return "\(directory.root) was replaced by another directory (moved away or removed and made again, or a symbolic link)"
        case .found, .unreadable: break
        }
        switch Self.id(of: directory.stateDirectory) {
        case .missing: return "its state directory \(directory.stateDirectory) was removed"
        case .found(let now) where now != state: return "its state directory \(directory.stateDirectory) was replaced"
        case .found, .unreadable: return nil
        }
    }

    private enum Lookup {
        case found(FileID)
        case missing
        /// Anything but `ENOENT`/`ENOTDIR` (a permission taken away, say): not evidence that it is gone.
        case unreadable
    }

    private static func id(of path: String) -> Lookup {
        var info = stat()
        guard stat(path, &info) == 0 else { return errno == ENOENT || errno == ENOTDIR ? .missing : .unreadable }
        return .found(FileID(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
    }
}
