#if canImport(Glibc)
import Glibc
#endif

/// The process's limit on open files (`RLIMIT_NOFILE`). The agent holds a descriptor for each new file waiting to be
/// committed (`StagedFile`, rationed by `UnnamedFileBudget` from the soft limit), and the usual soft limit (1,024
/// under systemd and in most shells) is far below the hard one (524,288 under systemd), which exists so that programs
/// that need descriptors raise their soft limit themselves (as Go's runtime does at start); a program that uses
/// `select(2)` may not, and the agent never does.
public enum OpenFileLimit {
    /// The soft limit the agent raises itself to, at most: enough for every ration, far below any hard limit's cost.
    public static let wanted: UInt = 65_536

    /// Raises the soft limit towards the hard limit, to ``wanted`` at most, before any file is staged. Returns the
    /// soft limit in force afterwards (nil if it could not be read); never lowers it, and a refusal leaves it as it was.
    @discardableResult
    public static func raiseSoftLimit() -> UInt? {
        var limit = rlimit()
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        guard getrlimit(resource, &limit) == 0 else { return nil }
        let target = min(limit.rlim_max, wanted)
        guard limit.rlim_cur < target else { return UInt(limit.rlim_cur) }
        let before = limit.rlim_cur
        limit.rlim_cur = target
        return setrlimit(resource, &limit) == 0 ? UInt(target) : UInt(before)
    }
}
