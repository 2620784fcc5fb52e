#if canImport(Glibc)
import Glibc
#endif

/// ``FileStatus`` of paths in DIR behind the agent's test hooks, if any (a hook can make a path's status call
/// fail with a chosen errno). Like ``FileStatus``: nothing there is nil, any other failure is thrown, so the work
/// waits for the next look instead of deciding from a failed one.
///
/// A path under DIR is looked up relative to DIR's descriptor (`fstatat(dir, "name")`), not walked from `/` again:
/// a cold pass makes several status calls per file, and the walk of DIR's own path was a fair part of their cost.
struct PathStatus: Sendable {
    let hooks: AgentTestHooks?
    /// DIR's path with a trailing `/`, and a descriptor of DIR (-1: none, every path is walked from `/`).
    private let root: String
    private let descriptor: Int32

    init(hooks: AgentTestHooks?, root: String = "", descriptor: Int32 = -1) {
        self.hooks = hooks
        self.root = root.hasSuffix("/") || root.isEmpty ? root : root + "/"
        self.descriptor = descriptor
    }

    /// The status of `path` (never following a link), nil when nothing is there. Throws any other failure.
    func status(of path: String) throws(SyncError) -> FileStatus? {
        if let code = hooks?.statusFailure(of: path) {
            if code == ENOENT || code == ENOTDIR { return nil }
            throw FileStatus.failure(of: path, errno: code)
        }
        guard descriptor >= 0, !root.isEmpty, path.utf8.count > root.utf8.count, path.hasPrefix(root) else {
            return try FileStatus.at(path)
        }
        do {
            return try FileStatus.at(String(path.utf8.dropFirst(root.utf8.count))!, relativeTo: descriptor)
        } catch {
            throw FileStatus.failure(of: path, errno: error.errnoValue ?? EIO)
        }
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
