import Dispatch
import FoundationEssentials
import Glibc
import Logging
import POSIXThreads
import Synchronization

/// The buffer between the threads that log and the log file: callers append formatted lines under a short
/// lock, and a thread of its own writes them in batches, so a caller (often the `SyncActor`) never waits on
/// `write(2)`.
///
/// A batch is written at most `flushInterval` (100 ms) after its first line, at once when the buffer passes
/// `eagerBytes` (256 KiB), and at once on `flush()`, `reopen()` (`SIGHUP`) and `shutdown()`. The buffer holds at
/// most `capacity` (4 MiB) of lines not yet written. A caller that finds it full does what it asked for
/// (`LogSink.WhenFull`): by default it waits for the writer, up to `fullWait` (1 s), as it would have waited on
/// a slow `write(2)`; if the writer is stuck that long (a hung disk, a standard error nobody reads), the line
/// is dropped and counted, and so is every line that finds the buffer full until the writer moves again. A
/// caller that must never wait (the `SyncActor` silo) drops and counts its lines at once. The writer's next
/// batch starts with one warning line saying `dropped=N`. Nothing is dropped silently, and a stuck log costs
/// a waiting caller at most one wait of `fullWait`, a dropping caller none.
///
/// The file and standard error receive the same lines in the same order (each batch goes to the file, then
/// to stderr). After `shutdown()`, and if the thread could not be started, lines are written by the caller
/// under the lock, as the unbuffered sink did, so a line logged at exit is never lost.
final class LogWriter: Sendable {
    static let flushInterval: Duration = .milliseconds(100)
    static let eagerBytes = 256 * 1024
    static let capacity = 4 * 1024 * 1024
    static let fullWait: Duration = .seconds(1)
    /// How long `shutdown()` waits for the writer's last batch before it leaves the writer behind.
    static let shutdownWait: Duration = .seconds(5)

    /// Lines waiting for the writer, and what the writer is asked to do.
    private struct State: Sendable {
        var pending = LogBatch()
        /// Called once the batch that takes them is written: `flush()`, `reopen()`, a caller facing a full
        /// buffer, `waitUntilWritten()`.
        var waiters: [@Sendable () -> Void] = []
        /// Write without waiting for `flushInterval`.
        var urgent = false
        var reopen = false
        var stopping = false
        /// Lines dropped since the last batch (the buffer was full: for `fullWait`, or for a dropping caller).
        var dropped = 0
        /// A caller waited `fullWait` for room in vain: until the writer takes its next batch, a caller that
        /// finds the buffer full drops its line at once instead of waiting too.
        var stalled = false
        /// How many times a caller waited for the writer because the buffer was full (a `.wait` caller only).
        var waitsForRoom = 0
        /// No writer thread runs (stopped, or never started): callers write themselves, to `file`.
        var direct = false
        /// The file (nil: stderr only) while `direct`; the writer thread holds it otherwise.
        var file: LogFile?
        /// The writer was still stuck in `write(2)` when `shutdown()` gave up on it: later lines are dropped at once
        /// (the process is on its way out; a caller writing itself would be stuck in its turn).
        var abandoned = false
    }

    private let state: Mutex<State>
    /// Wakes the writer: signalled for the first line of a batch and for anything urgent.
    private let wake = DispatchSemaphore(value: 0)
    private let thread = Mutex<JoinableThread?>(nil)
    /// Signalled by the writer thread as it ends.
    private let stopped = DispatchSemaphore(value: 0)
    /// How lines are copied to stderr: not at all, as they are, or in the journal's form.
    private let standardError: LogSink.StandardErrorForm
    /// Standard error's descriptor (another file's in tests).
    private let standardErrorDescriptor: Int32
    /// For the writer's own `dropped=N` line.
    private let format: LogFormat

    /// Starts the writer thread for `file` (nil: stderr only); without a thread, callers write themselves.
    init(file: LogFile?, standardError: LogSink.StandardErrorForm, standardErrorDescriptor: Int32, format: LogFormat) {
        self.standardError = standardError
        self.standardErrorDescriptor = standardErrorDescriptor
        self.format = format
        state = Mutex(State())
        let started = try? JoinableThread.start(name: "emojiart-log") { [self] in
            run(file)
            stopped.signal()
        }
        if let started {
            thread.withLock { $0 = started }
            Self.register(self)
        } else {
            state.withLock { state in
                state.direct = true
                state.file = file
            }
        }
    }

    // MARK: - Every writer of the process

    private struct Registered: Sendable {
        weak var writer: LogWriter?
    }

    /// The writers whose thread runs, for `flushAll()`.
    private static let running = Mutex<[ObjectIdentifier: Registered]>([:])

    /// Flushes every writer at `exit(3)`, whatever path led there.
    private static let flushAtExit: Void = { atexit { LogWriter.flushAll() } }()

    private static func register(_ writer: LogWriter) {
        _ = flushAtExit
        running.withLock { $0[ObjectIdentifier(writer)] = Registered(writer: writer) }
    }

    /// Waits until every running writer has written what it holds (each for at most 5 s).
    static func flushAll() {
        for writer in running.withLock({ $0.values.compactMap(\.writer) }) { writer.waitForBatch(reopen: false) }
    }

    /// Queues one line: `line` for the file, `standardError` for stderr (nil: none), each without its newline.
    /// Returns false when the line was dropped (and counted) because the buffer was full.
    @discardableResult
    func append(file line: String, standardError: String?, whenFull: LogSink.WhenFull) -> Bool {
        let bytes = line.utf8.count + 1 + (standardError.map { $0.utf8.count + 1 } ?? 0)
        return append(bytes: bytes, lines: 1, whenFull: whenFull) { $0.append(line: line, standardError: standardError) }
    }

    /// Queues a batch of whole lines under one lock; returns false when the batch was dropped whole (and its
    /// lines counted) because the buffer was full.
    @discardableResult
    func append(_ batch: LogBatch, whenFull: LogSink.WhenFull) -> Bool {
        append(bytes: batch.byteCount, lines: batch.lines, whenFull: whenFull) { $0.append(batch) }
    }

    /// Has `put` add `lines` lines of `bytes` bytes to the buffer, or drops and counts them when the buffer is
    /// full (with `.wait`, after one wait for the writer); with no writer thread, `put`'s lines are written here.
    private func append(bytes needed: Int, lines: Int, whenFull: LogSink.WhenFull, _ put: (inout LogBatch) -> Void) -> Bool {
        var waited = false
        while true {
            let outcome = state.withLock { state -> (wake: Bool, full: Bool, taken: Bool) in
                if state.abandoned {
                    state.dropped += lines
                    return (false, false, false)
                }
                if state.direct {
                    var direct = LogBatch()
                    put(&direct)
                    write(direct, to: &state.file)
                    return (false, false, true)
                }
                if state.pending.byteCount + needed > Self.capacity && state.pending.byteCount > 0 {
                    guard waited || state.stalled || whenFull == .drop else {
                        state.waitsForRoom += 1
                        return (false, true, false)
                    }
                    if waited { state.stalled = true }
                    let first = state.dropped == 0
                    state.dropped += lines
                    state.urgent = true  // the writer says how many were dropped as soon as it can write again
                    return (first, false, false)
                }
                let first = state.pending.byteCount == 0
                put(&state.pending)
                let eager = !state.urgent && state.pending.byteCount >= Self.eagerBytes
                if eager { state.urgent = true }
                return (first || eager, false, true)
            }
            guard outcome.full else {
                if outcome.wake { wake.signal() }
                return outcome.taken
            }
            _ = waitForBatch(reopen: false, timeout: Self.fullWait)
            waited = true
        }
    }

    /// How many times a caller waited for room in the full buffer: never one that asked to drop instead.
    var waitsForRoom: Int {
        state.withLock { $0.waitsForRoom }
    }

    /// Waits until everything appended so far is written (at most `timeout`); with `reopen`, the file is
    /// then closed and opened again. Returns false on a timeout.
    @discardableResult
    func waitForBatch(reopen: Bool, timeout: Duration = .seconds(5)) -> Bool {
        let done = DispatchSemaphore(value: 0)
        guard afterNextBatch(reopen: reopen, { done.signal() }) else { return true }
        return done.wait(timeout: Self.deadline(after: timeout)) == .success
    }

    /// Suspends until everything appended so far is written; no thread waits meanwhile.
    func waitUntilWritten() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if !afterNextBatch(reopen: false, { continuation.resume() }) { continuation.resume() }
        }
    }

    /// Has the writer call `done` once the next batch is written (reopening the file after it, with
    /// `reopen`); returns false when no thread runs: then the file is reopened here, and nothing is pending.
    private func afterNextBatch(reopen: Bool, _ done: @escaping @Sendable () -> Void) -> Bool {
        let queued = state.withLock { state -> Bool in
            if state.abandoned { return false }  // nothing will be written
            if state.direct {
                if reopen { state.file?.reopen() }
                return false
            }
            state.waiters.append(done)
            state.urgent = true
            state.reopen = state.reopen || reopen
            return true
        }
        if queued { wake.signal() }
        return queued
    }

    private static func deadline(after duration: Duration) -> DispatchTime {
        let (seconds, attoseconds) = duration.components
        return .now() + Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Writes what is queued and stops the thread; later lines are written by their callers. Idempotent.
    ///
    /// A writer stuck in `write(2)` (a hung disk, a pipe nobody reads) is waited for `shutdownWait`, then left
    /// behind, and later lines are dropped: every exit path of the agent comes here, and joining such a writer held
    /// the process's exit for as long as it stayed stuck (a `--once` run with its log on a full pipe never ended).
    func shutdown() {
        guard let running = thread.withLock({ $0.take() }) else { return }
        _ = Self.running.withLock { $0.removeValue(forKey: ObjectIdentifier(self)) }
        state.withLock { state in
            state.stopping = true
            state.urgent = true
        }
        wake.signal()
        guard stopped.wait(timeout: Self.deadline(after: Self.shutdownWait)) == .success else {
            state.withLock { $0.abandoned = true }
            return
        }
        running.join()
    }

    /// Whether `shutdown()` left a stuck writer behind.
    var wasAbandoned: Bool {
        state.withLock { $0.abandoned }
    }

    /// Closes the file, once the thread is stopped.
    func close() {
        shutdown()
        state.withLock { $0.file?.close() }
    }

    // MARK: - The writer thread

    private func run(_ initial: LogFile?) {
        var file = initial
        var batch = LogBatch()
        while true {
            wake.wait()
            if !state.withLock({ $0.urgent }) {
                // Gather lines for up to the flush interval, unless something urgent cuts it short.
                _ = wake.wait(timeout: Self.deadline(after: Self.flushInterval))
            }
            while true {
                let (waiters, reopen, dropped, stopping) = state.withLock { state in
                    swap(&batch, &state.pending)
                    defer {
                        state.waiters = []
                        (state.urgent, state.reopen, state.dropped, state.stalled) = (false, false, 0, false)
                        // Stopping with nothing left: from now on callers write, in order after this batch.
                        if state.stopping && batch.byteCount == 0 { (state.direct, state.file) = (true, file) }
                    }
                    return (state.waiters, state.reopen, state.dropped, state.stopping)
                }
                if dropped > 0 { write(droppedLine(dropped), droppedLineForStandardError(dropped), to: &file) }
                write(batch, to: &file)
                if reopen { file?.reopen() }
                for waiter in waiters { waiter() }
                let emptied = batch.byteCount == 0
                batch.removeAll(keepingCapacityUpTo: Self.eagerBytes)
                if !stopping { break }
                if emptied { return }
            }
        }
    }

    private func write(_ batch: LogBatch, to file: inout LogFile?) {
        if !batch.file.isEmpty { batch.file.withUnsafeBytes { file?.write($0) } }
        if !batch.standardError.isEmpty {
            batch.standardError.withUnsafeBytes { LogSink.writeAll(standardErrorDescriptor, $0) }
        }
    }

    /// Writes the writer's own notice straight away.
    private func write(_ line: String, _ standardError: String?, to file: inout LogFile?) {
        var notice = LogBatch()
        notice.append(line: line, standardError: standardError)
        write(notice, to: &file)
    }

    /// The warning that starts a batch after lines were dropped: `event=log dropped=N`.
    private func droppedLine(_ count: Int, at date: Date = Date()) -> String {
        format.line(timestamp: date, level: .warning, message: Self.droppedMessage, metadata: Self.droppedMetadata(count))
    }

    private func droppedLineForStandardError(_ count: Int) -> String? {
        switch standardError {
        case .none: nil
        case .same: droppedLine(count)
        case .journal:
            JournalStream.priorityPrefix(for: .warning) + (format == .logfmt
                ? LogfmtFormatter.fields(level: .warning, message: Self.droppedMessage, metadata: Self.droppedMetadata(count))
                : droppedLine(count))
        }
    }

    private static let droppedMessage = "log lines dropped: the log writer was stuck with a full buffer"

    private static func droppedMetadata(_ count: Int) -> Logger.Metadata {
        ["event": "log", "dropped": .stringConvertible(count)]
    }
}
