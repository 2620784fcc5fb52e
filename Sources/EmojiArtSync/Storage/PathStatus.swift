#if canImport(Glibc)
import Glibc
#endif

/// `lstat(2)` of paths in DIR as the agent's ownership decisions see them: nothing there (`ENOENT`, `ENOTDIR`),
/// the status, or an error. An error (`EACCES`, `EIO`, `ENOMEM`...) is thrown, never read as "absent" or "something
/// else is there": a decision made from it (repair, release, remove) would be wrong, so the work waits for the
/// next look instead. Goes through the agent's test hooks, if any.
struct PathStatus: Sendable {
    let hooks: AgentTestHooks?

    /// The status of `path` (never following a link), nil when nothing is there. Throws any other failure.
    func status(of path: String) throws(SyncError) -> stat? {
        var info = stat()
        let code: Int32
        if let failure = hooks?.statusFailure(of: path) {
            code = failure
        } else if lstat(path, &info) == 0 {
            return info
        } else {
            code = errno
        }
        if code == ENOENT || code == ENOTDIR { return nil }
        throw SyncError.system("lstat", path: path, errno: code, hint: "cannot tell what is at the path; left as it is")
    }

    func state(of path: String) throws(SyncError) -> FileState {
        FileState(try status(of: path))
    }

    func fingerprint(of path: String) throws(SyncError) -> FileFingerprint? {
        try status(of: path).flatMap(FileFingerprint.init(regular:))
    }

    func occupant(at path: String) throws(SyncError) -> PathOccupant {
        PathOccupant(try status(of: path))
    }
}
