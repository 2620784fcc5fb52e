import Synchronization

/// Bytes of asset bodies received from the gallery, valid images or not: the one count behind `status`'s
/// `fetched`, the `--once` summary and `emojiart_sync_bytes_fetched_total`, so they cannot disagree.
///
/// Owned by an `AssetFetcher` (every copy of it shares this object) and added to where a body arrives, on
/// whatever thread finished the transfer; an atomic, because that is the whole of its state.
final class ReceivedBytes: Sendable {
    private let total = Atomic<Int>(0)

    init() {}

    /// Counts one body of `bytes` bytes.
    func add(_ bytes: Int) {
        total.add(bytes, ordering: .relaxed)
    }

    /// Every byte counted so far.
    var count: Int {
        total.load(ordering: .relaxed)
    }
}
