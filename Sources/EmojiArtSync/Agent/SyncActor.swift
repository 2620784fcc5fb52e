/// The global actor that owns the agent's state: `DiskStorage`, the `AssetIndex` that is the stored-images index,
/// the `ImageLoader`'s memory cache, loads in flight and failure ledger, the `GroupCommitter`, the repair queue
/// (`MirrorKeeper`) and the counters (the book's `ImageDatabase` silo, renamed).
///
/// Types that only ever work with that state are annotated `@SyncActor` instead of being actors of their
/// own, so they share one serial executor and never hop between each other: a memory or disk hit is answered
/// without leaving it, a batch of a pass at a time. Heavy work (fetching, PNG validation, hashing, writing
/// and flushing new files) does not happen on it: it runs on the transfer thread and the blocking-I/O pool,
/// and the actor only decides before and commits after, re-checking its state after every `await` because it
/// is reentrant.
@globalActor
public actor SyncActor {
    public static let shared = SyncActor()
}
