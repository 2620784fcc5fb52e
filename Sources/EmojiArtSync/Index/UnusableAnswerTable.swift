import FoundationEssentials

/// The index's second table, `unusable_answers`: the urls that answered with something that is not an image (the
/// book's `200` with a JSON error), each with the feed tag it had, so a later run does not ask again before
/// `RetryPolicy.unusableAnswer` has passed or the server changed its tag.
///
/// Owns two things besides the table's statements, both for a cold pass over a gallery with many error items:
/// - **Answers waiting to be written** (`pending`): a recorded answer is written with the index's next write
///   transaction (`AssetIndex.transaction`, which a pass runs for every few dozen files it stores), at a
///   checkpoint, or once `batchLimit` are waiting, not in a commit of its own. At 10,000 error items that was
///   10,000 commits, each with its write-ahead-log frames and SQLite's locks. A waiting answer is read as if
///   written; one lost to a crash costs the one request the table exists to save.
/// - **Which urls may have an answer on record** (`UnusableAnswerFilter`): a key it has never seen has none, so an
///   access that knows its key has no row either (`FeedCatalogue.isStored`) skips the index's lookup.
@SyncActor
final class UnusableAnswerTable {
    private let select: SQLiteConnection.Statement
    private let upsert: SQLiteConnection.Statement
    private let delete: SQLiteConnection.Statement
    private let deleteAll: SQLiteConnection.Statement
    private var pending: [(key: AssetKey, answer: UnusableAnswer)] = []
    private var filter = UnusableAnswerFilter()

    /// Answers waiting at most: then they are written in a transaction of their own.
    static let batchLimit = 64

    /// Prepares the statements and reads every url on record into the filter (one walk of a table that holds the
    /// error items only).
    init(connection: SQLiteConnection) throws(SyncError) {
        select = try connection.prepare("SELECT tag, reason, answered_at FROM unusable_answers WHERE key = ?")
        upsert = try connection.prepare(
            "INSERT OR REPLACE INTO unusable_answers(key, tag, reason, answered_at) VALUES (?, ?, ?, ?)")
        delete = try connection.prepare("DELETE FROM unusable_answers WHERE key = ?")
        deleteAll = try connection.prepare("DELETE FROM unusable_answers")
        let keys = try connection.prepare("SELECT key FROM unusable_answers")
        defer { keys.reset() }
        while try keys.step() {
            filter.insert(AssetKey(probing: keys.bytes(0)))
        }
    }

    /// Whether `key` may have an answer on record (false: certainly none, written or waiting).
    func mayHold(_ key: AssetKey) -> Bool { filter.mayContain(key) }

    /// The answer waiting to be written for `key`, if any.
    func waiting(for key: AssetKey) -> UnusableAnswer? {
        pending.last { $0.key == key }?.answer
    }

    /// The answer on record for `key`: the one waiting, else the table's.
    func answer(for key: AssetKey) throws(SyncError) -> UnusableAnswer? {
        if let waiting = waiting(for: key) { return waiting }
        defer { select.reset() }
        guard try select.bind(.text(key.rawValue)).step() else { return nil }
        return UnusableAnswer(
            tag: select.optionalText(0), reason: select.text(1),
            answeredAt: Date(timeIntervalSince1970: TimeInterval(select.int64(2))))
    }

    /// Keeps `answer` for `key` to be written with the next transaction. Returns whether enough are waiting that
    /// the caller should write them now (`AssetIndex` runs an empty transaction).
    func record(_ answer: UnusableAnswer, for key: AssetKey) -> Bool {
        pending.removeAll { $0.key == key }
        pending.append((key, answer))
        filter.insert(key)
        return pending.count >= Self.batchLimit
    }

    /// Forgets `key`'s answer, waiting or written.
    func forget(_ key: AssetKey) throws(SyncError) {
        pending.removeAll { $0.key == key }
        try delete.bind(.text(key.rawValue)).run()
    }

    /// Forgets every answer: the next access of each asks the server again.
    func forgetAll() throws(SyncError) {
        pending.removeAll()
        try deleteAll.run()
        filter = UnusableAnswerFilter()
    }

    /// Writes the answers waiting; to be called inside a write transaction. Returns how many were written: the
    /// caller drops them from the queue (`written(_:)`) once the transaction is committed, so a rolled-back one
    /// leaves them waiting.
    func writeWaiting() throws(SyncError) -> Int {
        for (key, answer) in pending {
            try upsert.bind(
                .text(key.rawValue), .optional(answer.tag), .text(answer.reason),
                .integer(Int64(answer.answeredAt.timeIntervalSince1970.rounded(.down)))
            ).run()
        }
        return pending.count
    }

    /// The first `count` answers waiting were committed.
    func written(_ count: Int) {
        pending.removeFirst(min(count, pending.count))
    }

    var waitingCount: Int { pending.count }

    /// Reads of the table SQLite ran (`SQLITE_STMTSTATUS_RUN`): for tests.
    var readsRun: Int { select.runs }
}

/// A set of urls with false positives and no false negatives: a bit per hash of the url, in a fixed table of
/// 2^19 bits (64 KiB). At 10,000 error items about one key in fifty that has no answer is taken for one that may
/// (it is then looked up, as before); a key inserted is always found.
struct UnusableAnswerFilter {
    private static let bits = 1 << 19
    private var words = [UInt64](repeating: 0, count: bits / 64)

    mutating func insert(_ key: AssetKey) {
        let bit = Self.bit(of: key)
        words[bit >> 6] |= 1 << UInt64(bit & 63)
    }

    func mayContain(_ key: AssetKey) -> Bool {
        let bit = Self.bit(of: key)
        return words[bit >> 6] & (1 << UInt64(bit & 63)) != 0
    }

    private static func bit(of key: AssetKey) -> Int { Int(UInt(bitPattern: key.hashValue) % UInt(bits)) }
}
