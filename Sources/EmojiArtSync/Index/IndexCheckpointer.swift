import CSQLite
import Synchronization

/// Moves the index's write-ahead log into the database file off the silo. SQLite's automatic checkpoint runs inside
/// the commit that crosses its threshold, and a checkpoint `fsync`s the database: on the silo's connection that
/// held the silo for the whole flush. Here the silo's connection never checkpoints itself; after a commit that
/// leaves `walPagesBeforeCheckpoint` pages or more in the log, a `PASSIVE` checkpoint runs on the blocking-I/O pool
/// through a connection of its own, and `checkpoint(truncating:)` is what making the index durable waits for.
///
/// Owns that second connection, used only under its `Mutex` (one checkpoint at a time, on whichever io thread),
/// and whether a background checkpoint is already on its way.
final class IndexCheckpointer: Sendable {
    /// 32 MiB of log (SQLite's own `wal_autocheckpoint` is 1,000 pages, 4 MiB). A batch of a cold pass rewrites a
    /// page per row (rows arrive in the feed's order, not the index's), so the log holds the same pages many times
    /// over, and a checkpoint copies each page once: at 1,000 pages a cold pass of 5,000 small assets copied about
    /// 2,900 pages through `pread` and `pwrite`, at 8,192 about 400. The log is only ever on disk (page cache, not
    /// the agent's memory), and a pass still ends with `checkpoint(truncating:)`, which empties it.
    static let walPagesBeforeCheckpoint = 8192

    private let connection: Mutex<SQLiteConnection>
    private let scheduled = Atomic<Bool>(false)
    private let finished = Atomic<Int>(0)

    init(path: String) throws(SyncError) {
        connection = Mutex(try SQLiteConnection(path: path))
    }

    /// Checkpoints finished, background and waited for alike (tests, `status`).
    var checkpoints: Int { finished.load(ordering: .relaxed) }

    /// Told after each commit of the silo's connection how many pages the log holds: a background checkpoint is
    /// started when they are many, unless one is on its way. Its failure changes nothing (the log stays, and the
    /// next one tries again).
    func committed(pages: Int) {
        guard pages >= Self.walPagesBeforeCheckpoint, !scheduled.exchange(true, ordering: .acquiringAndReleasing) else { return }
        BlockingIO.submit { [self] in
            try? checkpoint(truncating: false)
            scheduled.store(false, ordering: .releasing)
        }
    }

    /// Checkpoints now, on the calling thread (a blocking-I/O thread): `TRUNCATE` copies the whole log into the
    /// database, syncs it and empties the log (every change so far is then durable against a power cut); otherwise
    /// `PASSIVE`, which copies what no reader needs and waits for nobody.
    func checkpoint(truncating: Bool) throws(SyncError) {
        try connection.withLock { connection throws(SyncError) in
            try connection.execute(truncating ? "PRAGMA wal_checkpoint(TRUNCATE)" : "PRAGMA wal_checkpoint(PASSIVE)")
        }
        finished.add(1, ordering: .relaxed)
    }
}
