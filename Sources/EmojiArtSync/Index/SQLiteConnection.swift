import CSQLite
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// One connection to an SQLite database file, with the few operations the index needs: run a statement,
/// prepare one once and run it many times with bound values, and wrap work in a transaction.
///
/// Not `Sendable`: it is owned by the `AssetIndex`, which lives on the `SyncActor`, so the actor's serial
/// executor is the database's single writer and no SQLite mutex is needed (opened `NOMUTEX`).
final class SQLiteConnection {
    private let handle: OpaquePointer
    let path: String

    /// Opens (creating when missing) the database at `path`.
    init(path: String) throws(SyncError) {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &db, flags, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw SyncError(.system, "cannot open the index \(path): \(message)", path: path, underlying: SQLiteStatus(code: status))
        }
        self.handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 2000)
        sqlite3_commit_hook(db, { context in
            // `context` is this connection, which outlives the hook: its handle is closed in `deinit`.
            Unmanaged<SQLiteConnection>.fromOpaque(context!).takeUnretainedValue().commits += 1
            return 0  // 0: the commit goes ahead
        }, Unmanaged.passUnretained(self).toOpaque())
    }

    /// Transactions this connection committed, explicit or not, by SQLite's commit hook: for the tests and
    /// benchmarks that count the index's writes.
    private(set) var commits = 0

    /// A database in memory holding a copy of the one at `path`, which is read and never written: nothing is
    /// created or changed beside it (`--dry-run`). A database with no write-ahead log beside it (the agent's last
    /// connection closed it) is opened `immutable`, which takes no lock and makes no `-wal` or `-shm` file. One
    /// with a log (a run that ended without closing it) is copied with its log to a private directory under
    /// `$TMPDIR` and read there: reading the log in place would rebuild its `-shm` index in DIR.
    convenience init(copyOf path: String) throws(SyncError) {
        var logInfo = stat()
        let hasLog = stat(path + "-wal", &logInfo) == 0 && logInfo.st_size > 0
        let scratch = hasLog ? try Self.privateCopy(of: path) : nil
        defer { if let scratch { try? FileManager.default.removeItem(atPath: scratch.directory) } }
        let source = try SQLiteConnection(readingOnly: scratch?.database ?? path, immutable: !hasLog)
        try self.init(path: ":memory:")
        let backup = sqlite3_backup_init(handle, "main", source.handle, "main")
        guard let backup else { throw error("cannot copy \(path) into memory", status: sqlite3_errcode(handle)) }
        let stepped = sqlite3_backup_step(backup, -1)
        sqlite3_backup_finish(backup)
        guard stepped == SQLITE_DONE else { throw source.error("cannot copy the index into memory", status: stepped) }
    }

    /// Copies the database at `path` and its write-ahead log into a new private directory.
    private static func privateCopy(of path: String) throws(SyncError) -> (directory: String, database: String) {
        let base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        var template = Array("\(base)/emojiart-sync-index-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw SyncError.system("mkdtemp", path: base, errno: errno, hint: "cannot make a private copy of the index")
        }
        let directory = String(cString: made)
        let database = directory + "/index.sqlite3"
        do {
            try FileManager.default.copyItem(atPath: path, toPath: database)
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: database + "-wal")
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw SyncError(.system, "cannot copy the index \(path) to \(directory): \(error)", path: path)
        }
        return (directory, database)
    }

    /// Opens `path` read-only; `immutable`: without locks or any file beside it (a database no connection writes).
    init(readingOnly path: String, immutable: Bool = false) throws(SyncError) {
        let escaped = path.replacing("%", with: "%25").replacing("?", with: "%3f").replacing("#", with: "%23")
        let uri = "file:" + escaped + (immutable ? "?immutable=1" : "?mode=ro")
        var db: OpaquePointer?
        let status = sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nil)
        guard status == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "out of memory"
            if let db { sqlite3_close_v2(db) }
            throw SyncError(.system, "cannot read the index \(path): \(message)", path: path, underlying: SQLiteStatus(code: status))
        }
        self.handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, 2000)
    }

    deinit {
        sqlite3_close_v2(handle)
    }

    /// Hands each commit's count of pages in the write-ahead log to `checkpointer` instead of checkpointing inside
    /// the commit (`sqlite3_wal_hook` replaces SQLite's automatic checkpoint). The checkpointer must outlive the
    /// connection (its owner holds both).
    func checkpointElsewhere(_ checkpointer: IndexCheckpointer) {
        sqlite3_wal_hook(handle, { context, _, _, pages in
            if let context { Unmanaged<IndexCheckpointer>.fromOpaque(context).takeUnretainedValue().committed(pages: Int(pages)) }
            return SQLITE_OK
        }, Unmanaged.passUnretained(checkpointer).toOpaque())
    }

    /// Rows the last finished `INSERT`, `UPDATE` or `DELETE` changed.
    var changes: Int { Int(sqlite3_changes(handle)) }

    /// Rows every `INSERT`, `UPDATE` and `DELETE` of this connection changed since it was opened, committed or
    /// not: unchanged between two reads means this connection wrote nothing in between.
    var totalChanges: Int64 { sqlite3_total_changes64(handle) }

    /// Runs one or more statements that return no rows of interest.
    func execute(_ sql: String) throws(SyncError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        if status != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errstr(status))
            sqlite3_free(message)
            throw error(text, status: status)
        }
    }

    /// Compiles `sql` once, for repeated use.
    func prepare(_ sql: String) throws(SyncError) -> Statement {
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else { throw error("cannot prepare \(sql)", status: status) }
        return Statement(statement, connection: self)
    }

    /// How a transaction begins.
    enum TransactionKind {
        /// `BEGIN IMMEDIATE`: the write lock at once, for changes.
        case immediate
        /// `BEGIN` (deferred): only a read lock until something writes, for a sweep of lookups. Two `fcntl`
        /// calls fewer than an immediate one; a pass takes one per batch of entries and per miss.
        case deferred
    }

    /// `BEGIN IMMEDIATE`, `BEGIN`, `COMMIT`, `ROLLBACK`, compiled once: transactions are begun per batch of a pass.
    private lazy var transactionStatements: [String: Statement] = [:]

    /// Runs `body` inside a transaction of `kind` (`BEGIN ... COMMIT`), rolling back when it throws.
    func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws(SyncError) -> T) throws(SyncError) -> T {
        try control(kind == .immediate ? "BEGIN IMMEDIATE" : "BEGIN").run()
        do {
            let result = try body()
            try control("COMMIT").run()
            return result
        } catch {
            try? control("ROLLBACK").run()
            throw error
        }
    }

    private func control(_ sql: String) throws(SyncError) -> Statement {
        if let statement = transactionStatements[sql] { return statement }
        let statement = try prepare(sql)
        transactionStatements[sql] = statement
        return statement
    }

    /// The value of an integer `PRAGMA` (or any single-integer query).
    func integer(_ sql: String) throws(SyncError) -> Int64 {
        let statement = try prepare(sql)
        guard try statement.step() else { return 0 }
        return statement.int64(0)
    }

    fileprivate func error(_ what: String, status: Int32) -> SyncError {
        let detail = String(cString: sqlite3_errmsg(handle))
        return SyncError(.system, "index \(path): \(what): \(detail) (sqlite \(status))", path: path, underlying: SQLiteStatus(code: status))
    }

    /// A compiled statement. Bind values by 1-based index, `step` through rows, read columns by 0-based index;
    /// `reset` happens before each new use.
    final class Statement {
        private let statement: OpaquePointer
        private unowned let connection: SQLiteConnection

        fileprivate init(_ statement: OpaquePointer, connection: SQLiteConnection) {
            self.statement = statement
            self.connection = connection
        }

        deinit { sqlite3_finalize(statement) }

        /// Resets the statement and binds `values` to its parameters, in order.
        @discardableResult
        func bind(_ values: SQLiteValue...) -> Statement {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
            for (offset, value) in values.enumerated() {
                let index = Int32(offset + 1)
                switch value {
                case .null: sqlite3_bind_null(statement, index)
                case .integer(let number): sqlite3_bind_int64(statement, index, number)
                case .text(let text): sqlite3_bind_text(statement, index, text, -1, emojiart_sqlite_transient())
                }
            }
            return self
        }

        /// Advances to the next row; false when there is none.
        func step() throws(SyncError) -> Bool {
            let status = sqlite3_step(statement)
            switch status {
            case SQLITE_ROW: return true
            case SQLITE_DONE: return false
            default:
                sqlite3_reset(statement)
                throw connection.error("step failed", status: status)
            }
        }

        /// Ends the current use, releasing the read it holds (a statement left on a row blocks a checkpoint).
        func reset() { sqlite3_reset(statement) }

        /// Runs a statement that returns no rows.
        func run() throws(SyncError) {
            _ = try step()
            sqlite3_reset(statement)
        }

        /// How many times SQLite ran the statement (`SQLITE_STMTSTATUS_RUN`): for tests that count queries.
        var runs: Int { Int(sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_RUN, 0)) }

        func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }
        func isNull(_ column: Int32) -> Bool { sqlite3_column_type(statement, column) == SQLITE_NULL }
        func text(_ column: Int32) -> String {
            guard let pointer = sqlite3_column_text(statement, column) else { return "" }
            return String(cString: pointer)
        }
        func optionalText(_ column: Int32) -> String? { isNull(column) ? nil : text(column) }
        /// The column's text as its UTF-8 bytes, in place (no `String` made): valid until the next `step` or
        /// `reset`. Empty for NULL.
        func bytes(_ column: Int32) -> UnsafeBufferPointer<UInt8> {
            guard let pointer = sqlite3_column_text(statement, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
            return UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(statement, column)))
        }
    }
}

/// A value bound to a statement parameter.
enum SQLiteValue {
    case null
    case integer(Int64)
    case text(String)

    static func optional(_ text: String?) -> SQLiteValue { text.map(SQLiteValue.text) ?? .null }
    static func optional(_ number: Int64?) -> SQLiteValue { number.map(SQLiteValue.integer) ?? .null }
}

/// An SQLite result code, kept under the `SyncError` it caused, so that callers can tell a damaged database
/// from one they merely could not use now.
struct SQLiteStatus: Error, Sendable {
    let code: Int32

    /// The file says nothing about the database's health: it is busy, locked, unreadable or unwritable (for now).
    var isAboutAccessNotContent: Bool {
        [SQLITE_BUSY, SQLITE_LOCKED, SQLITE_IOERR, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_PERM, SQLITE_READONLY,
         SQLITE_NOMEM, SQLITE_AUTH].contains(code & 0xFF)
    }
}
