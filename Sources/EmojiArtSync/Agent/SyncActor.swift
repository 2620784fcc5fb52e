/// The global actor that owns the on-disk side of the agent: `DiskStorage`, the manifest that is the
/// stored-images index, and the disk-hit counter (the book's `ImageDatabase` silo, renamed).
///
/// Types that only ever work with that state are annotated `@SyncActor` instead of being actors of their
/// own, so they share one serial executor and never hop between each other. Heavy work (PNG validation,
/// hashing, writing and fsyncing new files) does not happen on it: those functions are `@concurrent` and the
/// actor only awaits their verdicts, re-checking its state afterwards because it is reentrant.
@globalActor
public actor SyncActor {
    public static let shared = SyncActor()
}
