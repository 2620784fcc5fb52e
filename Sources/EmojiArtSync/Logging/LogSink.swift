import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Where log lines go: a log file that rotates by size, and optionally standard error.
///
/// Lines are formatted by their callers and handed to a `LogWriter`, which appends them to a buffer under a
/// short lock and writes them in batches from a thread of its own: within 100 ms, at once on `flush()`,
/// `reopen()` and `shutdown()`, and never losing a line silently when the disk stalls (see `LogWriter`). The
/// file is a `LogFile`: rotation at `rotation.maxBytes` keeping `rotation.keep` files, and an
/// outside rotation (logrotate's rename) is followed within a second of the next write; `reopen()` (`SIGHUP`)
/// reopens at once. A sink dropped without `shutdown()` shuts down in `deinit`.
///
/// When standard error is the systemd journal (`JournalStream`), the copy on stderr is the journal's form of
/// the line: a priority prefix and no timestamp; the log file keeps its timestamps. The journal is for a person:
/// lines of kind `.access` (one per asset access, a hundred thousand in a pass) stay in the log file and are
/// not copied there, unless there is no log file.
///
/// A caller that must never wait (the `SyncActor` silo) appends with `whenFull: .drop`: if the writer is stuck
/// with a full buffer, its lines are dropped and counted at once (see `LogWriter`).
public final class LogSink: Sendable {
    /// How the log file rotates: at `maxBytes`, keeping `keep` old files. The defaults (16 MiB, 5) hold a day of a
    /// 100,000-asset agent polling a changed feed hourly, and a full pass besides (docs/BENCHMARKS.md, "the log").
    public struct Rotation: Sendable, Equatable {
        /// The smallest size `--log-max-size` takes.
        public static let smallestMaxBytes = 64 * 1024
        public var maxBytes: Int
        public var keep: Int
        public init(maxBytes: Int = 16 * 1024 * 1024, keep: Int = 5) {
            self.maxBytes = max(1024, maxBytes)
            self.keep = max(1, keep)
        }
    }

    /// How lines are copied to standard error.
    enum StandardErrorForm: Sendable {
        case none, same, journal
    }

    /// What a line is to a reader of the journal.
    enum LineKind: Sendable {
        /// An event a person reads: a repair, a failure, a poll, a pass, a signal, a purge. Goes everywhere.
        case event
        /// One line per asset access (`event=asset` below warning): under the journal, in the log file only.
        case access
    }

    /// What a caller does when the buffer is full because the writer is stuck (a hung disk, a standard error
    /// nobody reads).
    enum WhenFull: Sendable {
        /// Wait for the writer, at most 1 s, as a slow `write(2)` would make it; then drop and count.
        case wait
        /// Drop and count at once: for the `SyncActor` silo, whose thread must never park on the log.
        case drop
    }

    /// The log file's path, or nil when the sink writes to stderr only.
    public let path: String?
    public let rotation: Rotation
    /// Standard error is the journal (`$JOURNAL_STREAM` names it): lines there take their journal form.
    let standardErrorIsJournal: Bool
    /// The log file is rotated: false without one, and for a path that is a symbolic link or no regular file
    /// (written through, never renamed; see `LogFile`).
    let rotates: Bool
    private let standardError: StandardErrorForm
    private let writer: LogWriter

    /// Opens (creating when needed, mode 0644) `path` for appending and starts the writer thread. `format` is
    /// the format of the sink's own lines (the writer's `dropped=N` warning), the one the handlers write.
    public convenience init(
        path: String?, alsoStandardError: Bool, rotation: Rotation = Rotation(), format: LogFormat = .logfmt
    ) throws(SyncError) {
        try self.init(
            path: path, alsoStandardError: alsoStandardError, rotation: rotation, format: format,
            standardErrorDescriptor: STDERR_FILENO, environment: ProcessInfo.processInfo.environment)
    }

    /// As the public initializer, with "standard error" another descriptor and the environment given: for tests
    /// of the journal's copy, on a file whose device and inode `environment["JOURNAL_STREAM"]` names.
    package init(
        path: String?, alsoStandardError: Bool, rotation: Rotation = Rotation(), format: LogFormat = .logfmt,
        standardErrorDescriptor: Int32, environment: [String: String]
    ) throws(SyncError) {
        self.path = path
        self.rotation = rotation
        self.standardErrorIsJournal =
            alsoStandardError && JournalStream.isConnected(standardErrorDescriptor, environment: environment)
        standardError = !alsoStandardError ? .none : standardErrorIsJournal ? .journal : .same
        let file = try path.map { path throws(SyncError) in try LogFile(path: path, rotation: rotation) }
        rotates = file?.rotates ?? false
        writer = LogWriter(
            file: file, standardError: standardError, standardErrorDescriptor: standardErrorDescriptor, format: format)
    }

    deinit {
        writer.close()
    }

    /// Queues one line (a newline is appended), the same for the file and for stderr.
    public func write(line: String) {
        write(line: line, journalLine: { line })
    }

    /// Queues `line` for the file, and for stderr unless stderr is the journal: then `journalLine()` goes there,
    /// unless the line is of a kind the journal does not get (`standardErrorForm(for:)`). Returns false when the
    /// line was dropped (and counted) because the buffer was full.
    @discardableResult
    func write(
        line: String, kind: LineKind = .event, whenFull: WhenFull = .wait, journalLine: () -> String
    ) -> Bool {
        let copy: String? =
            switch standardErrorForm(for: kind) {
            case .none: nil
            case .same: line
            case .journal: journalLine()
            }
        return writer.append(file: line, standardError: copy, whenFull: whenFull)
    }

    /// Queues a batch of whole lines with one lock (`AccessLineWriter`); false when it was dropped whole.
    func append(_ batch: LogBatch, whenFull: WhenFull) -> Bool {
        writer.append(batch, whenFull: whenFull)
    }

    /// How many times a caller waited for room in the full buffer (`WhenFull.wait`); a `.drop` caller never does.
    var waitsForRoom: Int {
        writer.waitsForRoom
    }

    /// How a line of `kind` is copied to stderr: an access line not at all on the journal when the log file
    /// has it (the journal is for what a person reads; without a file the journal is the only log there is).
    func standardErrorForm(for kind: LineKind) -> StandardErrorForm {
        kind == .access && standardError == .journal && path != nil ? .none : standardError
    }

    /// Returns once every line queued before it is written (or after 5 s, if the writer is stuck).
    public func flush() {
        writer.waitForBatch(reopen: false)
    }

    /// Suspends until every line queued before it is written, without blocking a thread: for an async caller
    /// that tells the world something its log lines must already show (systemd's `READY=1` after a reload).
    func waitUntilWritten() async {
        await writer.waitUntilWritten()
    }

    /// Writes what is queued, then closes and reopens the log file (after an outside rotation; `SIGHUP` does
    /// this). Returns once done (or after 5 s, if the writer is stuck).
    public func reopen() {
        writer.waitForBatch(reopen: path != nil)
    }

    /// Returns once every sink of the process has written what it holds (each waits at most 5 s). Runs at
    /// `exit(3)` by itself; a test that reads a log file an agent in the same process writes calls it first.
    static func flushAll() {
        LogWriter.flushAll()
    }

    /// Writes what is queued and stops the writer thread; lines queued later are written by their callers at
    /// once, so a line logged on the way out is not lost. Every exit path of the agent calls this
    /// (`SyncAgent.shutdown()`). Idempotent.
    public func shutdown() {
        writer.shutdown()
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and EINTR; gives up silently on an error.
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { writeAll(fd, $0) }
    }

    /// Writes all of `buffer` to `fd`, retrying short writes and EINTR; gives up silently on an error.
    package static func writeAll(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) {
        try? writeFully(fd, buffer)  // A log that cannot be written must not take the agent down.
    }
}
