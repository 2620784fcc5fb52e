#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A per-user inotify limit the kernel enforces, set with sysctl(8) and readable under /proc/sys.
///
/// When one is reached, the error message names the sysctl, its current value and how to raise it,
/// because the errno alone (`EMFILE`, or the misleading `ENOSPC` "No space left on device") does not
/// tell a user what to do.
enum InotifyLimit: Sendable, CaseIterable {
    /// How many inotify instances (`inotify_init1` file descriptors) one user may hold.
    case maxUserInstances
    /// How many watches (`inotify_add_watch`) one user may hold over all instances.
    case maxUserWatches

    /// The sysctl key, e.g. `fs.inotify.max_user_watches`.
    var sysctlName: String {
        switch self {
        case .maxUserInstances: "fs.inotify.max_user_instances"
        case .maxUserWatches: "fs.inotify.max_user_watches"
        }
    }

    /// Where the current value is readable, e.g. `/proc/sys/fs/inotify/max_user_watches`.
    var procPath: String {
        "/proc/sys/" + sysctlName.replacingDots()
    }

    /// The current value, read from ``procPath``; nil when the file cannot be read or does not hold
    /// a number (no /proc in a container, say). Plain `open`/`read`, no Foundation: this runs on
    /// error paths and must not throw.
    func currentValue() -> Int? {
        let fd = open(procPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { _ = close(fd) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = try? retryingInterrupts { bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
        guard let count, count > 0 else { return nil }
        let text = String(decoding: bytes[..<count], as: UTF8.self)
        return Int(text.filter { !$0.isWhitespace })
    }
}

extension String {
    /// `fs.inotify.max_user_watches` becomes `fs/inotify/max_user_watches`.
    fileprivate func replacingDots() -> String {
        String(map { $0 == "." ? "/" : $0 })
    }
}
