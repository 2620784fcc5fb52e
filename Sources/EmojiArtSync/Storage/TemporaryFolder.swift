#if canImport(Glibc)
import Glibc
#endif

/// The state folder's `tmp/`, where each body is written before it is renamed into DIR: its path, and a descriptor
/// of it opened once (`O_PATH`), so a temporary file is created and later renamed relative to it (`openat`,
/// `renameat2`) instead of by a path the kernel walks from `/` for every file. Owns the descriptor: it is closed
/// when the last user lets go, never while a file is being made through it. -1 when it could not be opened: every
/// call then goes by path.
final class TemporaryFolder: Sendable {
    let path: String
    let descriptor: Int32

    init(path: String) {
        self.path = path
        descriptor = open(path, DiskStorage.openPathOnly | O_DIRECTORY | O_CLOEXEC)
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Where `*at` calls find the file at `path`: its name relative to the descriptor when it is a file of this
    /// folder, else the path itself.
    func location(of path: String) -> (directory: Int32, name: String) {
        let folder = self.path.utf8
        guard descriptor >= 0, path.utf8.count > folder.count + 1, path.utf8.starts(with: folder),
            path.utf8.dropFirst(folder.count).first == UInt8(ascii: "/"),
            let name = String(path.utf8.dropFirst(folder.count + 1)), !name.utf8.contains(UInt8(ascii: "/"))
        else { return (AT_FDCWD, path) }
        return (descriptor, name)
    }
}
