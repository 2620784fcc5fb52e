/// The exit codes of `emojiart-sync`, as documented in `--help`, the README and the man page.
public enum ExitStatus: Int32, Sendable, CaseIterable {
    /// Every asset in the feed is on disk and valid (or, for the agent, it stopped on request).
    case success = 0
    /// Nothing could be synced: the gallery is unreachable, the feed unreadable, or DIR unusable.
    case fatal = 1
    /// The sync ran, but some assets could not be had; the log and stderr name their keys.
    case partial = 2
    /// Another agent already runs on DIR.
    case locked = 3
    /// Bad command line (sysexits.h `EX_USAGE`).
    case usage = 64

    /// The exit status for a finished pass.
    public static func of(_ report: SyncReport) -> ExitStatus {
        report.isComplete ? .success : .partial
    }
}
