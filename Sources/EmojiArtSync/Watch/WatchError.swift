#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why a ``DirectoryWatcher`` could not start, or why its stream ended early.
///
/// ``kind`` is for code (`switch error.kind`: recreate a missing directory, give up on a file that is
/// not a directory), ``message`` is a sentence for the log that says what to do. For failed system
/// calls ``call`` names the C function, ``errnoValue`` its errno and ``path`` the directory.
struct WatchError: Error, Sendable, CustomStringConvertible {
    /// The category of failure.
    enum Kind: String, Sendable, Hashable {
        /// `inotify_init1` failed with `EMFILE`: the user's inotify instances
        /// (`fs.inotify.max_user_instances`) or the process's file descriptors are used up.
        case instanceLimit
        /// `inotify_add_watch` failed with `ENOSPC`: the user's watches (`fs.inotify.max_user_watches`)
        /// are used up.
        case watchLimit
        /// The path exists but is not a directory (`ENOTDIR`, from `IN_ONLYDIR`).
        case notADirectory
        /// The path, or a directory on the way to it, does not exist (`ENOENT`).
        case noSuchDirectory
        /// Any other failure of a system call (`EACCES`, `ENOMEM`, a failed `read` or `poll`, ...).
        case system
    }

    /// The category of failure.
    let kind: Kind
    /// One or two sentences for a person reading the log.
    let message: String
    /// The C function that failed: `inotify_init1`, `inotify_add_watch`, `eventfd`, `pthread_create`,
    /// `read` or `poll`.
    let call: String
    /// The failed call's errno (or, for `pthread_create`, its returned error number).
    let errnoValue: Int32
    /// The directory the watcher was for.
    let path: String

    /// Creates an error; inside the module prefer the factories below, which write the message.
    init(kind: Kind, message: String, call: String, errno: Int32, path: String) {
        self.kind = kind
        self.message = message
        self.call = call
        self.errnoValue = errno
        self.path = path
    }

    /// The message, then the call and errno: `... (inotify_add_watch, errno 28)`.
    var description: String {
        "\(message) (\(call), errno \(errnoValue))"
    }
}

extension WatchError {
    /// `inotify_init1` failed.
    static func initFailed(errno code: Int32, path: String) -> WatchError {
        if code == EMFILE {
            let current = InotifyLimit.maxUserInstances.currentValue()
            return WatchError(
                kind: .instanceLimit, message: instanceLimitMessage(path: path, currentValue: current),
                call: "inotify_init1", errno: code, path: path)
        }
        return system("inotify_init1", errno: code, path: path, doing: "cannot create an inotify instance")
    }

    /// `inotify_add_watch` failed.
    static func addWatchFailed(errno code: Int32, path: String) -> WatchError {
        let call = "inotify_add_watch"
        switch code {
        case ENOSPC:
            let current = InotifyLimit.maxUserWatches.currentValue()
            return WatchError(
                kind: .watchLimit, message: watchLimitMessage(path: path, currentValue: current),
                call: call, errno: code, path: path)
        case ENOTDIR:
            return WatchError(
                kind: .notADirectory,
                message: "cannot watch \(path): it is not a directory (or a directory on the way to it is not)",
                call: call, errno: code, path: path)
        case ENOENT:
            return WatchError(
                kind: .noSuchDirectory, message: "cannot watch \(path): no such directory",
                call: call, errno: code, path: path)
        default:
            return system(call, errno: code, path: path, doing: "cannot watch \(path)")
        }
    }

    /// Any other failed call: `doing: strerror`.
    static func system(_ call: String, errno code: Int32, path: String, doing: String) -> WatchError {
        WatchError(
            kind: .system, message: "\(doing): \(String(cString: strerror(code)))",
            call: call, errno: code, path: path)
    }

    /// The message for `EMFILE` from `inotify_init1`: names `fs.inotify.max_user_instances`, its
    /// current value (`currentValue`, nil when /proc could not be read) and how to raise it, and the
    /// other cause of `EMFILE`, the process's own descriptor limit.
    static func instanceLimitMessage(path: String, currentValue: Int?) -> String {
        let limit = InotifyLimit.maxUserInstances
        return "cannot watch \(path): this user has no inotify instances left (sysctl \(limit.sysctlName) "
            + "\(valueText(limit, currentValue)); every program that watches files holds some), or this "
            + "process has used up its file descriptors (ulimit -n). "
            + raiseAdvice(limit, currentValue)
    }

    /// The message for `ENOSPC` from `inotify_add_watch`: names `fs.inotify.max_user_watches`, its
    /// current value (`currentValue`, nil when /proc could not be read) and how to raise it, now and
    /// across reboots.
    static func watchLimitMessage(path: String, currentValue: Int?) -> String {
        let limit = InotifyLimit.maxUserWatches
        return "cannot watch \(path): this user has no inotify watches left (sysctl \(limit.sysctlName) "
            + "\(valueText(limit, currentValue)); editors, IDEs and file indexers hold many). "
            + raiseAdvice(limit, currentValue)
    }

    /// `is 8192`, or `could not be read from /proc/sys/...`.
    private static func valueText(_ limit: InotifyLimit, _ currentValue: Int?) -> String {
        if let currentValue { return "is \(currentValue)" }
        return "could not be read from \(limit.procPath)"
    }

    /// How to raise `limit`, suggesting twice the current value (or N when it is unknown).
    private static func raiseAdvice(_ limit: InotifyLimit, _ currentValue: Int?) -> String {
        let target = currentValue.map { String($0 * 2) } ?? "N"
        let setting = "\(limit.sysctlName)=\(target)"
        return "Raise it now with `sudo sysctl -w \(setting)`, and across reboots with the line "
            + "`\(setting)` in a file in /etc/sysctl.d/ (e.g. /etc/sysctl.d/60-inotify.conf, "
            + "then `sudo sysctl --system`)."
    }
}
