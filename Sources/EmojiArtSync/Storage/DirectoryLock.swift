import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One agent per directory: an exclusive `flock(2)` on `DIR/.emojiart-sync/lock`, holding the owner's PID.
///
/// The kernel drops the lock when the process dies, however it dies, so a stale lock file never blocks a new
/// agent. The file itself is never deleted (deleting it would let two agents lock two different inodes).
public final class DirectoryLock: Sendable {
    public let path: String
    private let descriptor: Mutex<Int32>

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = Mutex(descriptor)
    }

    deinit { release() }

    /// Takes the lock or throws `.locked` naming the PID of the agent that holds it.
    public static func acquire(path: String) throws(SyncError) -> DirectoryLock {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 { throw SyncError.system("open", path: path, errno: errno, hint: "cannot open the lock file") }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let code = errno
            if code == EINTR { continue }
            close(fd)
            if code == EWOULDBLOCK {
                let pid = holder(path: path).map { "PID \($0)" } ?? "unknown PID"
                throw SyncError(.locked, "another emojiart-sync (\(pid)) already runs on this directory (lock \(path))", path: path)
            }
            throw SyncError.system("flock", path: path, errno: code, hint: "cannot lock the directory")
        }
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return DirectoryLock(path: path, descriptor: fd)
    }

    /// The PID of the agent holding the lock at `path`, or nil when no agent holds it.
    public static func holder(path: String) -> pid_t? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return nil
        }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return pid_t(text)
    }

    /// Empties the PID and drops the lock. Idempotent.
    public func release() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            _ = ftruncate(fd, 0)
            flock(fd, LOCK_UN)
            close(fd)
            fd = -1
        }
    }
}
