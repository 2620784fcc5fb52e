import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The agent's structured error: what failed, in words a person reads in the log, plus the detail
/// needed to act on it (the system call, its errno and the path, or the underlying error).
public struct SyncError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure this is; the command line maps kinds to exit codes.
    public enum Code: String, Sendable {
        /// A system call failed (see `call`, `errnoValue`, `path`).
        case system
        /// The gallery could not be reached or answered with something unusable.
        case server
        /// The feed was not valid JSON of the expected shape, or was hostile.
        case feed
        /// Bytes that should be a PNG were not a valid one.
        case invalidImage
        /// A file at an asset's path belongs to someone else; the agent leaves it alone.
        case conflict
        /// The directory is locked by another agent.
        case locked
        /// Bad configuration (a server URL we cannot use, say).
        case configuration
    }

    public let code: Code
    /// A sentence for the log, e.g. `cannot create DIR/.emojiart-sync: Permission denied (open, errno 13)`.
    public let message: String
    /// The failed system call's name, when `code == .system`.
    let call: String?
    /// The failed system call's errno, when `code == .system`.
    let errnoValue: Int32?
    /// The path the failure concerns, if any.
    public let path: String?
    /// The error underneath, if this one wraps another.
    let underlying: (any Error)?

    init(
        _ code: Code, _ message: String, call: String? = nil, errno: Int32? = nil, path: String? = nil,
        underlying: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.call = call
        self.errnoValue = errno
        self.path = path
        self.underlying = underlying
    }

    /// A failed system call: `hint: path: strerror (call, errno N)`.
    public static func system(_ call: String, path: String?, errno: Int32, hint: String) -> SyncError {
        let reason = String(cString: strerror(errno))
        let subject = path.map { "\($0): " } ?? ""
        return SyncError(
            .system, "\(hint): \(subject)\(reason) (\(call), errno \(errno))", call: call, errno: errno, path: path)
    }

    public var description: String { message }
}
