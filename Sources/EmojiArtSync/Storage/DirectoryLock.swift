import CShims
import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One agent per directory: an open-file-description write lock (`fcntl(F_OFD_SETLK)`, whole file) on
/// `DIR/.emojiart-sync/lock`, which holds the owner's PID.
///
/// The kernel drops the lock when the process dies, however it dies, so a stale lock file never blocks a new
/// agent. The file itself is never deleted (deleting it would let two agents lock two different inodes).
/// `holder` asks with `F_OFD_GETLK`, which takes no lock, so `status` and `purge` can never make an agent
/// that starts at that instant fail with "locked".
public final class DirectoryLock: Sendable {
    public let path: String
    private let descriptor: Mutex<Int32>

    private init(path: String, descriptor: Int32) {
        self.path = path
        self.descriptor = Mutex(descriptor)
    }

    deinit { release() }

    /// Takes the lock or throws `.locked` naming the PID of the agent that holds it.
    static func acquire(path: String) throws(SyncError) -> DirectoryLock {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 { throw SyncError.system("open", path: path, errno: errno, hint: "cannot open the lock file") }
        do {
            _ = try retryingInterrupts { emojiart_ofd_lock_exclusive(fd) }
        } catch {
            let code = error.errno
            close(fd)
            if code == EAGAIN || code == EACCES {
                let pid = holder(path: path).map { "PID \($0)" } ?? "unknown PID"
                throw SyncError(.locked, "another emojiart-sync (\(pid)) already runs on this directory (lock \(path))", path: path)
            }
            throw SyncError.system("fcntl(F_OFD_SETLK)", path: path, errno: code, hint: "cannot lock the directory")
        }
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(fd, 0)
        _ = text.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
        return DirectoryLock(path: path, descriptor: fd)
    }

    /// The PID of the agent holding the lock at `path`, or nil when no agent holds it. Takes no lock.
    public static func holder(path: String) -> pid_t? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        guard emojiart_ofd_is_locked(fd) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        let text = String(decoding: buffer[..<count], as: UTF8.self)
        return pid_t(PlainText.trimmed(text))
    }

    /// Empties the PID and drops the lock. Idempotent.
    func release() {
        descriptor.withLock { fd in
            guard fd >= 0 else { return }
            _ = ftruncate(fd, 0)
            _ = emojiart_ofd_unlock(fd)
            close(fd)
            fd = -1
        }
    }
}
