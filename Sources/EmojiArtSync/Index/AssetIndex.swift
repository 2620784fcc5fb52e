import FoundationEssentials
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// The stored-images index and ownership ledger: one row per file the agent wrote, in an SQLite database
/// at `DIR/.emojiart-sync/index.sqlite3` (WAL mode).
///
/// A file without a row is not the agent's: never modified, moved or deleted. A row holds what a disk hit
/// needs to trust the file without reading it (size, SHA-256, the `lstat` fingerprint recorded when the agent
/// last wrote or verified it) and what freshness needs (the feed's tag and the server's validators).
///
/// Lives on the `SyncActor`: one connection, and the actor's serial executor is SQLite's single writer. Its page
/// cache is SQLite's default 2 MiB: no pass reads rows one by one at random any more (the catalogue walks them in
/// order), and a cold pass's random inserts cost the same CPU with 2 MiB as with 32 (the pages come from the
/// kernel's cache), while 8 MiB added 6 MiB to a cold pass's peak (docs/BENCHMARKS.md). New files are recorded
/// a batch per transaction (`GroupCommitter`); other changes are small transactions of their own (nothing ever
/// rewrites the index). Every read and write throws on failure: a busy or failing index is never read as "no row". Commits survive the
/// process being killed at any instant; with `synchronous=NORMAL` the last ones could be lost to a power cut
/// until `checkpoint()` (called at the end of a pass and on stop). A lost row is safe: the file looks like the
/// user's until the next access proves it byte-identical to the server's and adopts it.
///
/// A second table remembers items whose URL answered with something that is not an image (the book's `200`
/// with a JSON error), with the feed tag they had, so a later run does not ask for them again before
/// `RetryPolicy.unusableAnswer` has passed or the server changed their tag (`UnusableAnswerTable`, which writes
/// them with the next transaction). It was added without a version change: an index of version 1 without it gets
/// it when opened.
///
/// A database that is corrupt or of another schema version (never one that is only busy or unreadable for
/// now) is moved aside and rebuilt empty (adoption then
/// brings the files back under the agent's care); a `manifest.json` from earlier versions is imported once.
@SyncActor
final class AssetIndex {
    /// 2: the identity (device, inode) of the file the agent wrote, beside its fingerprint (`migrateFromVersion1`).
    /// 3: rows in arrival order, found by name through an index of their own (`filesTable`, `migrateFromVersion2`).
    /// 4: the birth time of the file the agent wrote, beside its device and inode (`migrateFromVersion3`).
    nonisolated static let schemaVersion: Int64 = 4

    /// The rows, stored in the order they arrive (SQLite's rowid), and found by name through `files_by_name`.
    ///
    /// A cold pass records rows in the feed's order, which is no order of names. Keyed by name (version 2), each
    /// transaction's rows landed in as many random leaves of the table, and each was written again, with the inner
    /// pages above it, into the log and then the file. Appended in arrival order, a transaction's rows fill a few
    /// pages at the table's end, and only the index of names, whose entries are a tenth of a row, takes random
    /// inserts (the figures: docs/BENCHMARKS.md).
    static let filesTable = """
        CREATE TABLE IF NOT EXISTS files(
            name TEXT NOT NULL,
            key TEXT NOT NULL,
            size INTEGER NOT NULL,
            sha256 TEXT NOT NULL,
            tag TEXT,
            etag TEXT,
            last_modified TEXT,
            device INTEGER,
            inode INTEGER,
            mtime_ns INTEGER,
            ctime_ns INTEGER,
            owner_device INTEGER,
            owner_inode INTEGER,
            owner_born_ns INTEGER
        );
        CREATE UNIQUE INDEX IF NOT EXISTS files_by_name ON files(name);
        """

    /// The page size of a new index: the random inserts into the index of names rewrite one page each, so a page
    /// half the default's halves what they write (a row of this table fits a 2 KiB page with room to spare). An
    /// index made with another page size keeps it: SQLite changes it only by rebuilding the file outside WAL mode.
    static let pageSize = 2048

    private let connection: SQLiteConnection
    private let selectByName: SQLiteConnection.Statement
    private let upsert: SQLiteConnection.Statement
    private let insertNew: SQLiteConnection.Statement
    private let selectForAccess: SQLiteConnection.Statement
    private let updateFingerprint: SQLiteConnection.Statement
    private let updateOwner: SQLiteConnection.Statement
    private let deleteByName: SQLiteConnection.Statement
    private let selectAll: SQLiteConnection.Statement
    private let selectPage: SQLiteConnection.Statement
    private let selectKeys: SQLiteConnection.Statement
    private let selectSweep: SQLiteConnection.Statement
    private let selectFingerprintPage: SQLiteConnection.Statement
    private let updateTag: SQLiteConnection.Statement
    /// The answers that were no image: the second table, with the ones waiting to be written.
    private let unusableAnswers: UnusableAnswerTable

    /// Rows in the index, kept as rows change (never counted by a query after `open`).
    private(set) var count: Int

    /// Queries for a key's row (`lookUp`, `entry(named:)`) SQLite ran, by its own count, and the transactions it
    /// committed: for the tests that a cold pass looks nothing up and writes in few transactions.
    var rowQueriesRun: Int { selectForAccess.runs + selectByName.runs }
    /// Reads of the unusable answers' table alone SQLite ran.
    var unusableReadsRun: Int { unusableAnswers.readsRun }
    var commits: Int { connection.commits }

    /// Rows added or removed since the index was opened: what the feed's sweeps (`FeedCatalogue.current()`)
    /// compare to know that nothing they depend on changed. Replacing a row keeps it.
    private(set) var rowChanges: UInt64 = 0
    /// Told of every row added or removed, in the silo, as it happens (the `FeedCatalogue` keeps its count of
    /// stored feed keys with it), and of a write that was rolled back (`.unknown`: count again).
    var rowObserver: ((RowChange) -> Void)?

    /// A row that came, changed or went: its url and file name, and the fingerprint it records now.
    enum RowChange {
        case added(url: String, name: String, fingerprint: FileFingerprint?, tag: String?)
        /// The row's file or fingerprint changed (a replacement, a verification, an adoption, damage found), and
        /// its tag if `tag` says it was written (a replacement).
        case updated(url: String, name: String, fingerprint: FileFingerprint?, tag: TagChange = .kept)
        case removed(url: String, name: String)
        /// A transaction that changed rows was rolled back: what the rows are is known only by reading them.
        case unknown
    }

    /// Whether a row change wrote the row's tag.
    enum TagChange {
        case kept
        case written(String?)
    }
    /// The url and file name of the rows added or removed last (at most about `changeLogLimit`), oldest first;
    /// those its reader has seen are dropped (`forgetRowChanges(through:)`), so an idle agent keeps none (a cold
    /// pass left 8,192 of them, two strings each: 1.4 MB).
    private var changeLog: [(key: String, name: String)] = []
    /// How many row changes the log keeps at least; a test lowers it to make the log overflow with a few rows.
    var changeLogLimit = 4096

    private init(connection: SQLiteConnection) throws(SyncError) {
        self.connection = connection
        try connection.execute("""
            PRAGMA page_size=\(Self.pageSize);
            PRAGMA journal_mode=WAL;
            PRAGMA synchronous=NORMAL;
            PRAGMA cache_size=-2048;
            \(Self.filesTable)
            CREATE TABLE IF NOT EXISTS unusable_answers(
                key TEXT PRIMARY KEY NOT NULL,
                tag TEXT,
                reason TEXT NOT NULL,
                answered_at INTEGER NOT NULL
            ) WITHOUT ROWID;
            PRAGMA user_version=\(Self.schemaVersion);
            """)
        selectByName = try connection.prepare(
            "SELECT name, key, size, sha256, tag, etag, last_modified, device, inode, mtime_ns, ctime_ns, owner_device, owner_inode, owner_born_ns FROM files WHERE name = ?")
        selectAll = try connection.prepare(
            "SELECT name, key, size, sha256, tag, etag, last_modified, device, inode, mtime_ns, ctime_ns, owner_device, owner_inode, owner_born_ns FROM files ORDER BY name")
        selectPage = try connection.prepare("SELECT name, size FROM files WHERE name > ? ORDER BY name LIMIT ?")
        selectKeys = try connection.prepare("SELECT key, name, tag FROM files")
        selectSweep = try connection.prepare(Self.sweepQuery)
        selectFingerprintPage = try connection.prepare(
            "SELECT name, size, device, inode, mtime_ns, ctime_ns FROM files WHERE name > ? ORDER BY name LIMIT ?")
        updateTag = try connection.prepare("UPDATE files SET tag = ? WHERE name = ?")
        upsert = try connection.prepare("""
            INSERT OR REPLACE INTO files(name, key, size, sha256, tag, etag, last_modified, device, inode, mtime_ns, ctime_ns, owner_device, owner_inode, owner_born_ns)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        insertNew = try connection.prepare("""
            INSERT OR IGNORE INTO files(name, key, size, sha256, tag, etag, last_modified, device, inode, mtime_ns, ctime_ns, owner_device, owner_inode, owner_born_ns)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        selectForAccess = try connection.prepare("""
            SELECT f.name, f.key, f.size, f.sha256, f.tag, f.etag, f.last_modified, f.device, f.inode, f.mtime_ns,
                f.ctime_ns, f.owner_device, f.owner_inode, f.owner_born_ns, u.tag, u.reason, u.answered_at
            FROM (SELECT ?1 AS name, ?2 AS key) AS wanted
            LEFT JOIN files AS f ON f.name = wanted.name
            LEFT JOIN unusable_answers AS u ON u.key = wanted.key
            """)
        updateFingerprint = try connection.prepare(
            "UPDATE files SET device = ?, inode = ?, mtime_ns = ?, ctime_ns = ? WHERE name = ?")
        updateOwner = try connection.prepare(
            "UPDATE files SET device = ?, inode = ?, mtime_ns = ?, ctime_ns = ?, owner_device = ?, owner_inode = ?, owner_born_ns = ? WHERE name = ?")
        deleteByName = try connection.prepare("DELETE FROM files WHERE name = ?")
        unusableAnswers = try UnusableAnswerTable(connection: connection)
        count = Int(try connection.integer("SELECT count(*) FROM files"))
    }

    /// Opens the index of `directory`, rebuilding it when it is unusable and importing an old manifest.
    /// Returns the index and what a person should know about how it was opened (nil when all was normal).
    static func open(directory: SyncDirectory) throws(SyncError) -> (AssetIndex, notice: String?) {
        let path = directory.indexPath
        var notice: String?
        let index: AssetIndex
        let unchanged = Self.checkpointStillHolds(directory)
        do {
            index = try openChecked(path: path, trusted: unchanged)
        } catch let error where (error.underlying as? SQLiteStatus)?.isAboutAccessNotContent == true {
            // Busy, read-only, unreadable, disk full: nothing says the index is damaged, so it is not moved aside.
            throw SyncError(.system, "\(error.message); the index was left as it is", path: path, underlying: error)
        } catch {
            let aside = path + ".corrupt"
            _ = rename(path, aside)
            unlink(path + "-wal")
            unlink(path + "-shm")
            notice = "index unusable (corrupt or another version); moved to \(aside) and rebuilt: files still identical to the server's are adopted as they are accessed"
            index = try AssetIndex(connection: SQLiteConnection(path: path))
        }
        index.checkpointPath = directory.indexCheckpointPath
        if let checkpointer = try? IndexCheckpointer(path: path) {
            index.connection.checkpointElsewhere(checkpointer)
            index.checkpointer = checkpointer
        }
        if let imported = try index.importManifest(at: directory.manifestPath) {
            notice = [notice, imported].compactMap { $0 }.joined(separator: "; ")
        }
        return (index, notice)
    }

    /// A copy in memory of the index of `directory`, for a run that must change nothing there (`--dry-run`): the
    /// file is read, never written, and nothing is created beside it (`SQLiteConnection(copyOf:)`). No index yet
    /// (a first run) is an empty one. An index the real run would move aside and rebuild is an empty one too, with
    /// the notice saying so; one of version 1 is migrated in the copy. The copy keeps no checkpoint, and an old
    /// `manifest.json` is not imported (that renames it).
    static func snapshot(of directory: SyncDirectory) throws(SyncError) -> (AssetIndex, notice: String?) {
        let path = directory.indexPath
        guard access(path, F_OK) == 0 else { return (try AssetIndex(connection: SQLiteConnection(path: ":memory:")), nil) }
        do {
            let connection = try SQLiteConnection(copyOf: path)
            try check(connection, path: path)
            return (try AssetIndex(connection: connection), nil)
        } catch let error where (error.underlying as? SQLiteStatus)?.isAboutAccessNotContent == true {
            throw SyncError(.system, "\(error.message); the index was left as it is", path: path, underlying: error)
        } catch {
            let notice = "index unusable (\(error.message)): a real run would move it to \(path).corrupt and rebuild it"
            return (try AssetIndex(connection: SQLiteConnection(path: ":memory:")), notice)
        }
    }

    /// Opens the database and proves it is one of ours, of this version, and sound (`quick_check`, unless
    /// `trusted`: the file is as the agent left it at its last checkpoint, and no write-ahead log holds more).
    private static func openChecked(path: String, trusted: Bool) throws(SyncError) -> AssetIndex {
        let connection = try SQLiteConnection(path: path)
        let upgradedFrom = try check(connection, path: path, quickCheck: !trusted)
        let index = try AssetIndex(connection: connection)
        index.upgradedFrom = upgradedFrom
        return index
    }

    /// The schema version the index had when it was opened, if it was migrated to this one then (the agent logs it).
    private(set) var upgradedFrom: Int64?

    /// Proves `connection` holds an index of ours, of this version or migrated to it, and sound (`quick_check`
    /// when `quickCheck` is true). Throws otherwise. Returns the version it was migrated from, if it was.
    @discardableResult
    private static func check(_ connection: SQLiteConnection, path: String, quickCheck: Bool = true) throws(SyncError) -> Int64? {
        let version = try connection.integer("PRAGMA user_version")
        let tables = try connection.integer("SELECT count(*) FROM sqlite_master")
        guard (1...schemaVersion).contains(version) || (version == 0 && tables == 0) else {
            throw SyncError(.system, "index \(path) has schema version \(version), not \(schemaVersion)", path: path)
        }
        if quickCheck { try Self.quickCheck(connection) }
        if version == 1 { try migrateFromVersion1(connection) }
        if version == 1 || version == 2 { try migrateFromVersion2(connection) }  // to the current schema at once
        if version == 3 { try migrateFromVersion3(connection) }
        return (1..<schemaVersion).contains(version) ? version : nil
    }

    /// Version 1 had no owner identity: each row takes the device and inode of its fingerprint, which was the
    /// file the agent wrote or last verified (a fingerprint forgotten after damage leaves the identity unknown,
    /// and whatever is at that path is then treated as not the agent's: moved aside, never replaced). One
    /// transaction: a crash leaves version 1, migrated again at the next start.
    private static func migrateFromVersion1(_ connection: SQLiteConnection) throws(SyncError) {
        try connection.transaction(.immediate) { () throws(SyncError) in
            try connection.execute("""
                ALTER TABLE files ADD COLUMN owner_device INTEGER;
                ALTER TABLE files ADD COLUMN owner_inode INTEGER;
                UPDATE files SET owner_device = device, owner_inode = inode;
                PRAGMA user_version=2;
                """)
        }
    }

    /// Version 2 kept the rows in a table keyed by name; they move, every column as it is, into `filesTable`. One
    /// transaction: a crash leaves version 2, migrated again at the next start. Once, well under a second at
    /// 100,000 rows.
    private static func migrateFromVersion2(_ connection: SQLiteConnection) throws(SyncError) {
        let columns = "name, key, size, sha256, tag, etag, last_modified, device, inode, mtime_ns, ctime_ns, owner_device, owner_inode"
        try connection.transaction(.immediate) { () throws(SyncError) in
            try connection.execute("""
                ALTER TABLE files RENAME TO files_version2;
                \(filesTable)
                INSERT INTO files(\(columns)) SELECT \(columns) FROM files_version2;
                DROP TABLE files_version2;
                PRAGMA user_version=\(schemaVersion);
                """)
        }
    }

    /// Version 3 did not record when the agent's file was born: each row gets an unknown birth time (NULL), and its
    /// file is told from a person's by device and inode alone, as before, until the agent writes or adopts it again.
    /// One transaction: a crash leaves version 3, migrated again at the next start.
    private static func migrateFromVersion3(_ connection: SQLiteConnection) throws(SyncError) {
        try connection.transaction(.immediate) { () throws(SyncError) in
            try connection.execute("""
                ALTER TABLE files ADD COLUMN owner_born_ns INTEGER;
                PRAGMA user_version=\(schemaVersion);
                """)
        }
    }

    private static func quickCheck(_ connection: SQLiteConnection) throws(SyncError) {
        let check = try connection.prepare("PRAGMA quick_check")
        defer { check.reset() }
        guard try check.step(), check.text(0) == "ok" else {
            throw SyncError(.system, "index \(connection.path) failed its integrity check", path: connection.path)
        }
    }

    /// Imports `manifest.json` (the index of earlier versions) once, then renames it `manifest.json.imported`.
    private func importManifest(at path: String) throws(SyncError) -> String? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let (manifest, warning) = Manifest.load(from: path)
        if let warning { return warning }
        try connection.transaction { () throws(SyncError) in
            for (name, entry) in manifest.files {
                try put(IndexEntry(name: name, key: entry.key, size: entry.size, sha256: entry.sha256), unlessPresent: true)
            }
        }
        _ = rename(path, path + ".imported")
        return "imported \(manifest.files.count) files from \(path) (kept as manifest.json.imported)"
    }

    // MARK: - Reading

    /// Runs `body` inside one transaction, so a sweep of thousands of lookups takes SQLite's locks once instead
    /// of once per statement, and a batch of changes commits together. Nothing in `body` may suspend. A failed
    /// `BEGIN` or `COMMIT` throws (the changes are rolled back): an index that cannot be written is an error.
    /// The unusable answers waiting to be written (`recordUnusableAnswer`) are written in it too.
    func transaction<T>(_ body: () throws(SyncError) -> T) throws(SyncError) -> T {
        let changesBefore = rowChanges
        do {
            var answersWritten = 0
            let result = try connection.transaction(.immediate) { () throws(SyncError) in
                answersWritten = try unusableAnswers.writeWaiting()
                return try body()
            }
            unusableAnswers.written(answersWritten)
            return result
        } catch {
            if rowChanges != changesBefore { rowsRolledBack() }
            throw error
        }
    }

    /// The rows added or removed in a transaction that was rolled back are not: the count is read again, the
    /// change log cannot say what changed, and the observer is told.
    private func rowsRolledBack() {
        if let rows = try? connection.integer("SELECT count(*) FROM files") { count = Int(rows) }
        changeLog.removeAll()
        rowChanges &+= 1  // more changes than the (empty) log holds: `rowsChanged(since:)` says walk the index
        rowObserver?(.unknown)
    }

    /// Runs `body`, which only reads, inside one read transaction (a deferred `BEGIN`: no write lock), so a sweep
    /// of lookups sees one state of the index and takes SQLite's locks once. Nothing in `body` may suspend.
    func readTransaction<T>(_ body: () throws(SyncError) -> T) throws(SyncError) -> T {
        try connection.transaction(.deferred, body)
    }

    /// The row for file `name`, if the agent owns it. Throws when the index cannot be read (busy, I/O error):
    /// "cannot tell" is never "not ours", or an owned file would look like the user's.
    func entry(named name: String) throws(SyncError) -> IndexEntry? {
        defer { selectByName.reset() }
        guard try selectByName.bind(.text(name)).step() else { return nil }
        return Self.read(selectByName)
    }

    /// The row for `key`'s file, if the agent owns it for that key.
    func entry(for key: AssetKey) throws(SyncError) -> IndexEntry? {
        guard let entry = try entry(named: AssetFileName.name(for: key)), entry.key == key.rawValue else { return nil }
        return entry
    }

    /// What an access of `key` needs to know, in one statement: its row (if the agent owns its file for that key)
    /// and the answer with no image on record for its url, if any.
    func lookUp(_ key: AssetKey) throws(SyncError) -> (entry: IndexEntry?, unusable: UnusableAnswer?) {
        defer { selectForAccess.reset() }
        guard try selectForAccess.bind(.text(key.fileName), .text(key.rawValue)).step() else { return (nil, nil) }
        let entry = selectForAccess.isNull(0) ? nil : Self.read(selectForAccess)
        // An answer waiting to be written is newer than the table's.
        let unusable = unusableAnswers.waiting(for: key) ?? (selectForAccess.isNull(15) ? nil : UnusableAnswer(
            tag: selectForAccess.optionalText(14), reason: selectForAccess.text(15),
            answeredAt: Date(timeIntervalSince1970: TimeInterval(selectForAccess.int64(16)))))
        return (entry?.key == key.rawValue ? entry : nil, unusable)
    }

    /// Every row, ordered by name. Costs a walk of the table: for rescans and purges, not for each access.
    func allEntries() throws(SyncError) -> [IndexEntry] {
        selectAll.bind()
        defer { selectAll.reset() }
        var entries: [IndexEntry] = []
        entries.reserveCapacity(count)
        while try selectAll.step() { entries.append(Self.read(selectAll)) }
        return entries
    }

    /// Up to `limit` file names (with sizes) that sort after `name`, in order: how the scrub walks the index a
    /// little at a time without holding it all in memory.
    func names(after name: String, limit: Int) throws(SyncError) -> [(name: String, size: Int)] {
        selectPage.bind(.text(name), .integer(Int64(limit)))
        defer { selectPage.reset() }
        var page: [(name: String, size: Int)] = []
        while try selectPage.step() { page.append((selectPage.text(0), Int(selectPage.int64(1)))) }
        return page
    }

    /// Calls `body` with the key, file name and feed tag of every row, in no particular order: one walk of the
    /// table instead of a lookup per key, for the sweeps a changed feed needs (what is stored, stale, gone).
    /// Nothing else is read or kept: a sweep of 100,000 rows holds one row at a time. `body` must not use the index.
    func forEachKey(_ body: (_ key: String, _ name: String, _ tag: String?) -> Void) throws(SyncError) {
        selectKeys.bind()
        defer { selectKeys.reset() }
        while try selectKeys.step() { body(selectKeys.text(0), selectKeys.text(1), selectKeys.optionalText(2)) }
    }

    /// `forEachKey`, with the fingerprint each row records: the one walk a new feed costs (`FeedCatalogue`), which
    /// also fills the table of recorded fingerprints that lets a warm pass trust a file without a lookup. Each row's
    /// text is handed over in place, no `String` made; `body` must not use the index.
    func forEachRow(_ body: (IndexSweepRow) -> Void) throws(SyncError) {
        selectSweep.bind()
        defer { selectSweep.reset() }
        while try selectSweep.step() { Self.sweepRow(of: selectSweep, body) }
    }

    /// What a sweep reads of each row, in the columns `sweepRow(of:_:)` reads (`IndexRowSnapshot` reads the same
    /// through a connection of its own).
    nonisolated static let sweepQuery = "SELECT key, name, tag, size, device, inode, mtime_ns, ctime_ns FROM files"

    /// Calls `body` with the row `row` (a statement of `sweepQuery`) stands on.
    nonisolated static func sweepRow(of row: SQLiteConnection.Statement, _ body: (IndexSweepRow) -> Void) {
        body(IndexSweepRow(
            url: row.bytes(0), name: row.bytes(1), tag: row.isNull(2) ? nil : row.bytes(2),
            digest: fingerprint(row, size: 3, from: 4).map { FingerprintDigest($0).value } ?? FingerprintDigest.none))
    }

    /// Where a walk off the silo reads the rows (`IndexRowSnapshot.read`), and `changesMade` now; nil for an index
    /// that lives only in this connection (`--dry-run`'s copy in memory).
    func snapshotSource() -> (path: String, changesBefore: Int64)? {
        connection.path == ":memory:" ? nil : (connection.path, changesMade)
    }

    /// Rows this connection's statements changed since the index was opened, committed or rolled back: the same
    /// value twice means the index was not written in between (the agent is its only writer).
    var changesMade: Int64 { connection.totalChanges }

    /// Up to `limit` file names that sort after `name`, in order, each with the size and `lstat` fingerprint it
    /// was recorded with: how a rescan compares the files with the index a page at a time, reading no more.
    func fingerprints(after name: String, limit: Int) throws(SyncError) -> [(name: String, fingerprint: FileFingerprint?)] {
        selectFingerprintPage.bind(.text(name), .integer(Int64(limit)))
        defer { selectFingerprintPage.reset() }
        var page: [(name: String, fingerprint: FileFingerprint?)] = []
        while try selectFingerprintPage.step() {
            page.append((selectFingerprintPage.text(0), Self.fingerprint(selectFingerprintPage, size: 1, from: 2)))
        }
        return page
    }

    private static func read(_ row: SQLiteConnection.Statement) -> IndexEntry {
        IndexEntry(
            name: row.text(0), key: row.text(1), size: Int(row.int64(2)), sha256: row.text(3), tag: row.optionalText(4),
            etag: row.optionalText(5), lastModified: row.optionalText(6), fingerprint: fingerprint(row, size: 2, from: 7),
            identity: row.isNull(11) || row.isNull(12)
                ? nil
                : FileIdentity(
                    device: UInt64(bitPattern: row.int64(11)), inode: UInt64(bitPattern: row.int64(12)),
                    born: row.isNull(13) ? nil : row.int64(13)))
    }

    /// The fingerprint in columns `from` (device), +1 (inode), +2 (mtime), +3 (ctime), with the size in `size`.
    private nonisolated static func fingerprint(_ row: SQLiteConnection.Statement, size: Int32, from column: Int32) -> FileFingerprint? {
        guard !row.isNull(column) else { return nil }
        return FileFingerprint(
            device: UInt64(bitPattern: row.int64(column)), inode: UInt64(bitPattern: row.int64(column + 1)),
            size: row.int64(size), modifiedNanoseconds: row.int64(column + 2), changedNanoseconds: row.int64(column + 3))
    }

    // MARK: - Changing (each a transaction of its own)

    /// Records (or replaces) the row for `entry.name`. Returns true when the row is new.
    @discardableResult
    func put(_ entry: IndexEntry) throws(SyncError) -> Bool {
        try put(entry, unlessPresent: false)
    }

    /// `put`, or (`unlessPresent`) nothing when a row for the name exists. Counts the new row either way.
    @discardableResult
    private func put(_ entry: IndexEntry, unlessPresent: Bool) throws(SyncError) -> Bool {
        // A new row (every file of a cold pass) costs the one INSERT; an existing one, the INSERT that changed
        // nothing and the replacement.
        try write(entry, with: insertNew)
        let existed = connection.changes == 0
        if existed && unlessPresent { return false }
        if existed { try write(entry, with: upsert) }
        if !existed {
            count += 1
            noteRowChange(entry.key, name: entry.name)
            rowObserver?(.added(url: entry.key, name: entry.name, fingerprint: entry.fingerprint, tag: entry.tag))
        } else {
            rowObserver?(.updated(url: entry.key, name: entry.name, fingerprint: entry.fingerprint, tag: .written(entry.tag)))
        }
        return !existed
    }

    private func write(_ entry: IndexEntry, with statement: SQLiteConnection.Statement) throws(SyncError) {
        if TestFaultSwitch.indexWritesFail {
            throw SyncError(.system, "index \(connection.path): database or disk is full (test fault)", path: connection.path)
        }
        let fingerprint = entry.fingerprint
        try statement.bind(
            .text(entry.name), .text(entry.key), .integer(Int64(entry.size)), .text(entry.sha256), .optional(entry.tag),
            .optional(entry.etag), .optional(entry.lastModified),
            .optional(fingerprint.map { Int64(bitPattern: $0.device) }), .optional(fingerprint.map { Int64(bitPattern: $0.inode) }),
            .optional(fingerprint?.modifiedNanoseconds), .optional(fingerprint?.changedNanoseconds),
            .optional(entry.identity.map { Int64(bitPattern: $0.device) }), .optional(entry.identity.map { Int64(bitPattern: $0.inode) }),
            .optional(entry.identity?.born)
        ).run()
    }

    /// Records the fingerprint a file was last verified with (nil: unknown, so the next check reads it). The
    /// owner identity stays: a fingerprint is forgotten when the agent's file is damaged, and it is still the agent's.
    func setFingerprint(_ fingerprint: FileFingerprint?, of entry: IndexEntry) throws(SyncError) {
        try updateFingerprint.bind(
            .optional(fingerprint.map { Int64(bitPattern: $0.device) }), .optional(fingerprint.map { Int64(bitPattern: $0.inode) }),
            .optional(fingerprint?.modifiedNanoseconds), .optional(fingerprint?.changedNanoseconds), .text(entry.name)
        ).run()
        rowObserver?(.updated(url: entry.key, name: entry.name, fingerprint: fingerprint))
    }

    /// Makes the file with `fingerprint` and `identity` (its status's, with its birth time) the agent's file `name`
    /// (it holds exactly the agent's bytes): its identity and fingerprint are recorded.
    func adopt(_ fingerprint: FileFingerprint, identity: FileIdentity, of entry: IndexEntry) throws(SyncError) {
        let name = entry.name
        try updateOwner.bind(
            .integer(Int64(bitPattern: fingerprint.device)), .integer(Int64(bitPattern: fingerprint.inode)),
            .integer(fingerprint.modifiedNanoseconds), .integer(fingerprint.changedNanoseconds),
            .integer(Int64(bitPattern: identity.device)), .integer(Int64(bitPattern: identity.inode)), .optional(identity.born),
            .text(name)
        ).run()
        rowObserver?(.updated(url: entry.key, name: name, fingerprint: fingerprint))
    }

    /// Forgets file `name`: it is no longer the agent's.
    func remove(named name: String) throws(SyncError) {
        guard let removed = try entry(named: name) else { return }
        try deleteByName.bind(.text(name)).run()
        count -= 1
        noteRowChange(removed.key, name: name)
        rowObserver?(.removed(url: removed.key, name: name))
    }

    private func noteRowChange(_ key: String, name: String) {
        rowChanges &+= 1
        changeLog.append((key, name))
        if changeLog.count >= 2 * changeLogLimit { changeLog.removeFirst(changeLog.count - changeLogLimit) }
    }

    /// The url and file name of each row added or removed since `rowChanges` was `since`, oldest first (a row may
    /// appear more than once); nil when more changed since than the index remembers: walk it instead.
    func rowsChanged(since: UInt64) -> [(key: String, name: String)]? {
        let missed = rowChanges &- since
        guard missed <= UInt64(changeLog.count) else { return nil }
        return Array(changeLog.suffix(Int(missed)))
    }

    /// Drops the row changes up to `rowChanges` = `seen`: the reader of `rowsChanged(since:)` is up to date
    /// with them and will only ask since `seen` or later.
    func forgetRowChanges(through seen: UInt64) {
        let unseen = rowChanges &- seen
        guard unseen < UInt64(changeLog.count) else { return }
        if unseen == 0 {
            changeLog = []
        } else {
            changeLog.removeFirst(changeLog.count - Int(unseen))
        }
    }

    /// Records the feed's tag for file `name` (a row stored without one takes the feed's as it is).
    func setTag(_ tag: String, named name: String) throws(SyncError) {
        try updateTag.bind(.text(tag), .text(name)).run()
    }

    // MARK: - Answers that were not images

    /// The last unusable answer recorded for `key` (the server answered, with something that is not a PNG).
    func unusableAnswer(for key: AssetKey) throws(SyncError) -> UnusableAnswer? {
        try unusableAnswers.answer(for: key)
    }

    /// Whether `key` may have an unusable answer on record: false means certainly none (`UnusableAnswerTable`).
    func mayHaveUnusableAnswer(for key: AssetKey) -> Bool { unusableAnswers.mayHold(key) }

    /// Records that `key`'s URL answered with something that is not an image, under feed tag `tag`: written with
    /// the next write transaction (or now, once `UnusableAnswerTable.batchLimit` are waiting), read as recorded
    /// at once.
    func recordUnusableAnswer(_ answer: UnusableAnswer, for key: AssetKey) throws(SyncError) {
        if unusableAnswers.record(answer, for: key) { try transaction {} }
    }

    /// Forgets the unusable answer of `key` (it was stored since, or should be asked for again).
    func forgetUnusableAnswer(for key: AssetKey) throws(SyncError) {
        try unusableAnswers.forget(key)
    }

    /// Forgets every unusable answer: the next access of each asks the server again.
    func forgetUnusableAnswers() throws(SyncError) {
        try unusableAnswers.forgetAll()
    }

    /// Gives back the memory of SQLite's page cache (up to its 2 MiB): after a pass or a sweep has filled it, an
    /// idle agent has no use for it, and the next lookups read their pages again from the kernel's cache.
    func releaseMemory() {
        try? connection.execute("PRAGMA shrink_memory")  // a failure changes nothing but the memory held
    }

    /// Moves the write-ahead log into the database file and syncs it: after this, every change so far is
    /// durable against a power cut, not only against the process dying. `mayRecordState` is asked, once the
    /// checkpoint is done and just before the marker that spares the next start its `quick_check` is made, whether
    /// that new name may appear in the state directory (not while `rm -rf DIR` may be inside it): asked before the
    /// checkpoint's I/O, its answer would be stale by the time the name is made.
    func checkpoint(mayRecordState: () -> Bool = { true }) async throws(SyncError) {
        if unusableAnswers.waitingCount > 0 { try transaction {} }
        if let checkpointer {
            let failure: SyncError? = await BlockingIO.run {
                do throws(SyncError) {
                    try checkpointer.checkpoint(truncating: true)
                    return nil
                } catch {
                    return error
                }
            }
            if let failure { throw failure }
        } else {
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        if let checkpointPath, mayRecordState() { Self.recordCheckpoint(of: connection.path, at: checkpointPath) }
    }

    /// Checkpoints the log off the silo (`IndexCheckpointer`); nil when its connection could not be opened, and
    /// SQLite's automatic checkpoint runs in the silo as before.
    private(set) var checkpointer: IndexCheckpointer?

    /// Where `checkpoint()` records the file's state (`SyncDirectory.indexCheckpointPath`); set by `open`.
    private var checkpointPath: String?

    /// The index file's size, modification and change times, as the marker of a checkpoint holds them.
    private static func fileState(of path: String) -> String? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return "\(info.st_size) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec) \(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec)\n"
    }

    private static func recordCheckpoint(of path: String, at marker: String) {
        guard let state = fileState(of: path) else { return }
        let temporary = marker + ".new"
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        let written = state.utf8CString.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count - 1) }
        close(fd)
        if written > 0 { rename(temporary, marker) } else { unlink(temporary) }
    }

    /// Whether the index file is exactly as the agent's last checkpoint left it, with no write-ahead log holding
    /// more: then its soundness was proven when it was opened before, and `quick_check` (a read of the whole file,
    /// hundreds of milliseconds at 100,000 rows) is not run again. The marker is removed either way: a run that
    /// ends without a checkpoint (a crash) leaves none, and the next start checks.
    static func checkpointStillHolds(_ directory: SyncDirectory) -> Bool {
        let marker = directory.indexCheckpointPath
        defer { unlink(marker) }
        var info = stat()
        let walEmpty = stat(directory.indexPath + "-wal", &info) != 0 || info.st_size == 0
        guard walEmpty, let recorded = try? DiskStorage.readFile(at: marker, limit: 256),
            let now = fileState(of: directory.indexPath)
        else { return false }
        return recorded == Array(now.utf8)
    }
}

/// One file the agent wrote: its name in DIR, the key it holds, what its bytes are, and how to trust it.
struct IndexEntry: Sendable, Equatable {
    var name: String
    var key: String
    var size: Int
    var sha256: String
    /// The feed's `checksum` for the key when the file was stored: a different one means the server changed it.
    var tag: String?
    /// The server's `ETag` and `Last-Modified` for the bytes, for a conditional re-fetch.
    var etag: String?
    var lastModified: String?
    /// `lstat` of the file when the agent last wrote or verified it; nil when unknown.
    var fingerprint: FileFingerprint?
    /// The file the agent wrote or adopted (device, inode): only a file with this identity at `name` is the
    /// agent's. Nil when unknown (a row of a version-1 index whose fingerprint was forgotten, an imported manifest).
    var identity: FileIdentity?

    init(
        name: String, key: String, size: Int, sha256: String, tag: String? = nil, etag: String? = nil,
        lastModified: String? = nil, fingerprint: FileFingerprint? = nil, identity: FileIdentity? = nil
    ) {
        self.name = name
        self.key = key
        self.size = size
        self.sha256 = sha256
        self.tag = tag
        self.etag = etag
        self.lastModified = lastModified
        self.fingerprint = fingerprint
        self.identity = identity ?? fingerprint?.identity
    }
}

/// An item's URL answered, but not with an image: when, under which feed tag, and what was wrong.
struct UnusableAnswer: Sendable, Equatable {
    var tag: String?
    var reason: String
    var answeredAt: Date

    init(tag: String?, reason: String, answeredAt: Date) {
        self.tag = tag
        self.reason = reason
        self.answeredAt = answeredAt
    }
}
