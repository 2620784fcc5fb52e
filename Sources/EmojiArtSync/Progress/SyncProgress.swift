/// How far a sync pass has come: distinct assets done (synced or failed) of those in the feed, and the bytes
/// of the assets synced so far. `SyncEngine` reports one after each asset; `ProgressLine` draws them.
public struct SyncProgress: Sendable, Equatable {
    public var done: Int
    public var total: Int
    public var bytes: Int

    public init(done: Int, total: Int, bytes: Int) {
        self.done = done
        self.total = total
        self.bytes = bytes
    }
}
