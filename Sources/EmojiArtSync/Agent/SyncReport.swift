/// What one full pass over the feed achieved; the command line turns it into an exit code and a summary.
public struct SyncReport: Sendable {
    /// Feed entries processed (duplicates included).
    public var entries = 0
    /// Distinct assets in the feed.
    public var uniqueAssets = 0
    /// Distinct assets that are on disk, valid and the agent's.
    public var available = 0
    /// Distinct assets that could not be had, with the reason (error items, dead links, conflicts).
    public var failures: [Failure] = []
    /// Feed items whose url was refused, never fetched.
    public var rejected: [AssetKey.Rejection] = []
    public var hits: [Hit: Int] = [:]
    public var bytesFetched = 0
    public var repairs = 0
    /// Owned files whose bytes had to be read to trust them (their fingerprint had changed).
    var filesRead = 0
    public var duration: Duration = .zero
    /// The most accesses that were pending at once (bounded by the engine's window).
    var peakAccessesInFlight = 0
    /// The most jobs the pass held decided but not started: bounded by the window and the batches answered ahead,
    /// whatever the feed's size.
    var peakJobsQueued = 0
    /// Files of items gone from the feed that were removed, and why none were when the guard refused.
    var removed = 0
    public var deletionRefused: String?
    /// Jobs that entered the silo during the run, when they are counted (`EMOJIART_SYNC_COUNT_SILO_JOBS=1`, see
    /// `SyncActor`); nil otherwise.
    var siloJobs: Int?

    public init() {}

    /// An asset the pass could not have, and why: the error kept as it came, formatted only when a caller shows it
    /// (a gallery with 10,000 error items formatted 10,000 texts for a report that prints twenty).
    public struct Failure: Sendable {
        public let key: AssetKey
        let cause: Cause

        enum Cause: Sendable {
            /// The access's error.
            case error(any Error)
            /// The access failed without an error to show.
            case failed
            /// Every access succeeded, yet no file is stored for it (removed or damaged after its access).
            case notStored
        }

        /// Why, as the report prints it.
        public var reason: String {
            switch cause {
            case .error(let error): String(describing: error)
            case .failed: "failed"
            case .notStored: "not stored on disk"
            }
        }
    }

    /// True when every asset of the feed is on disk and valid, and no item was refused.
    public var isComplete: Bool { failures.isEmpty && rejected.isEmpty }
}
