/// How far a sync pass has come: distinct assets done (synced or failed) of those in the feed, how many of
/// those failed so far, and the bytes of the assets synced so far. `SyncEngine` reports one after each asset;
/// `ProgressLine` draws them.
public struct SyncProgress: Sendable, Equatable {
    public var done: Int
    public var total: Int
    public var bytes: Int
    /// Assets done that could not be had (an answer that is not an image, a transfer that failed); one that
    /// succeeds later in the pass no longer counts.
    public var failed: Int

    public init(done: Int, total: Int, bytes: Int, failed: Int = 0) {
        self.done = done
        self.total = total
        self.bytes = bytes
        self.failed = failed
    }
}
