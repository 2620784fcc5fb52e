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
    /// The fewest open files an agent with `concurrency` transfers works with: its fixed descriptors (the standard
    /// streams, lock, log, index and its journal files, DIR and its state folders, inotify, fanotify, wake-ups),
    /// a socket and a file being written per transfer, and room for the threads of the Swift runtime, whose
    /// dispatch pool reads `/proc` to watch its threads and stops the process when it cannot open it (below about
    /// 30, the agent died that way with `SIGILL`).
    public static func minimum(concurrency: Int) -> UInt {
        UInt(max(64, 32 + 4 * max(1, concurrency)))
    }

    /// Nil when the hard limit on open files allows ``minimum(concurrency:)``, else what to tell the person who
    /// started the agent (the soft limit is raised to the hard one at start, so the hard one is what counts).
    public static func shortfall(concurrency: Int) -> String? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        let needed = minimum(concurrency: concurrency)
        guard limit.rlim_max < needed else { return nil }
        return "the agent may open at most \(limit.rlim_max) files (RLIMIT_NOFILE) and needs \(needed) with --concurrency "
            + "\(concurrency): raise the limit (ulimit -Hn, or LimitNOFILE= in its unit)"
    }

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
