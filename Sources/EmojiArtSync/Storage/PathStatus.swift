#if canImport(Glibc)
import Glibc
#endif

/// ``FileStatus`` of paths in DIR behind the agent's test hooks, if any (a hook can make a path's status call
/// fail with a chosen errno). Like ``FileStatus``: nothing there is nil, any other failure is thrown, so the work
/// waits for the next look instead of deciding from a failed one.
struct PathStatus: Sendable {
    let hooks: AgentTestHooks?

    /// The status of `path` (never following a link), nil when nothing is there. Throws any other failure.
    func status(of path: String) throws(SyncError) -> FileStatus? {
        if let code = hooks?.statusFailure(of: path) {
            if code == ENOENT || code == ENOTDIR { return nil }
            throw FileStatus.failure(of: path, errno: code)
        }
        return try FileStatus.at(path)
    }

    /// The fingerprint of the regular file at `path`; nil when nothing or something else is there.
    func fingerprint(of path: String) throws(SyncError) -> FileFingerprint? {
        try status(of: path)?.fingerprint
    }

    /// What occupies `path` (``PathOccupant/Kind/absent`` when nothing does).
    func occupant(at path: String) throws(SyncError) -> PathOccupant {
        try status(of: path)?.occupant ?? PathOccupant.absent
    }
}
