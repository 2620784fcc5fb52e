import FoundationEssentials
import Logging

/// The last error that ended a piece of the background agent's work but not the agent (a poll, a check, a
/// rescan page, a purge), and when it came: `status` shows the newer of it and an asset's last failure. The
/// keeper and its repair queue both report here, so neither reaches into the other for it.
@SyncActor
final class WorkErrors {
    private let logger: Logger
    /// What went wrong last, in words for `status`.
    private(set) var last: String?
    /// When `last` was set.
    private(set) var lastAt = Date.distantPast

    init(logger: Logger) {
        self.logger = logger
    }

    /// Records `message` as the last error; its caller logs it in its own words.
    func record(_ message: String) {
        last = message
        lastAt = Date()
    }

    /// An error that ends one piece of work but not the agent: logged, shown by `status`, retried later.
    func report(_ error: any Error, while doing: String) {
        record(String(describing: error))
        logger.warning("cannot finish work now, will retry", metadata: [
            "event": "error", "while": .string(doing), "error": .string(String(describing: error)),
        ])
    }
}
