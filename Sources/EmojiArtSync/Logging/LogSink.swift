import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where log lines go: a log file that rotates by size, and optionally standard error.
///
/// Owns the log file descriptor. Lines from any thread are serialised by a mutex, so each line is one
/// `write(2)` and lines never interleave. Rotation: when the file would pass `rotation.maxBytes` (10 MiB by
/// default) it is renamed to `.1` (older ones shift up to `.N`, `rotation.keep` = 5 kept, the oldest dropped)
/// and a new file is opened. If an outside tool (logrotate) moves or deletes the file, the sink notices within a
/// second (the path no longer names the open inode) and reopens the path, so nothing is written into a
/// rotated-away file for long. `reopen()` forces that at once.
///
/// When standard error is the systemd journal (`JournalStream`), the copy on stderr is the journal's form of
/// the line: a priority prefix and no timestamp; the log file keeps its timestamps.
public final class LogSink: Sendable {
    /// How the log file rotates.
    public struct Rotation: Sendable, Equatable {
        public var maxBytes: Int
        public var keep: Int
        public init(maxBytes: Int = 10 * 1024 * 1024, keep: Int = 5) {
            self.maxBytes = max(1024, maxBytes)
            self.keep = max(1, keep)
        }
    }

    private struct State {
        var fileDescriptor: Int32 = -1
        var size = 0
        var inode: ino_t = 0
        var lastCheck: ContinuousClock.Instant = .now
    }

    /// The log file's path, or nil when the sink writes to stderr only.
    public let path: String?
    public let rotation: Rotation
    private let alsoStandardError: Bool
    /// Standard error is the journal (`$JOURNAL_STREAM` names it): lines there take their journal form.
    public let standardErrorIsJournal: Bool
    private let state: Mutex<State>

    /// Opens (creating when needed, mode 0644) `path` for appending.
    public init(path: String?, alsoStandardError: Bool, rotation: Rotation = Rotation()) throws(SyncError) {
        self.path = path
        self.rotation = rotation
        self.alsoStandardError = alsoStandardError
        self.standardErrorIsJournal =
            alsoStandardError && JournalStream.isConnected(environment: ProcessInfo.processInfo.environment)
        var initial = State()
        if let path {
            try Self.open(path, into: &initial)
        }
        self.state = Mutex(initial)
    }

    deinit {
        state.withLock { state in
            if state.fileDescriptor >= 0 { close(state.fileDescriptor) }
        }
    }

    /// Writes one line (a newline is appended), the same to the file and to stderr.
    public func write(line: String) {
        write(line: line, journalLine: { line })
    }

    /// Writes `line` to the file, and to stderr unless stderr is the journal: then `journalLine()` goes there.
    public func write(line: String, journalLine: () -> String) {
        let bytes = Self.terminated(line)
        let standardErrorBytes = standardErrorIsJournal ? Self.terminated(journalLine()) : bytes
        state.withLock { state in
            if let path {
                maintain(path, &state, incoming: bytes.count)
                if state.fileDescriptor >= 0 {
                    Self.writeAll(state.fileDescriptor, bytes)
                    state.size += bytes.count
                }
            }
            if alsoStandardError {
                Self.writeAll(STDERR_FILENO, standardErrorBytes)
            }
        }
    }

    private static func terminated(_ line: String) -> [UInt8] {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        return bytes
    }

    /// Closes and reopens the log file (after an outside rotation; `SIGHUP` does this).
    public func reopen() {
        guard let path else { return }
        state.withLock { state in
            if state.fileDescriptor >= 0 { close(state.fileDescriptor) }
            state.fileDescriptor = -1
            try? Self.open(path, into: &state)
        }
    }

    private func maintain(_ path: String, _ state: inout State, incoming: Int) {
        if state.size + incoming > rotation.maxBytes && state.size > 0 {
            rotate(path, &state)
            return
        }
        let now = ContinuousClock.now
        guard state.lastCheck.duration(to: now) >= .seconds(1) else { return }
        state.lastCheck = now
        var info = stat()
        if stat(path, &info) != 0 || info.st_ino != state.inode {
            if state.fileDescriptor >= 0 { close(state.fileDescriptor) }
            state.fileDescriptor = -1
            try? Self.open(path, into: &state)
        }
    }

    private func rotate(_ path: String, _ state: inout State) {
        if state.fileDescriptor >= 0 { close(state.fileDescriptor) }
        state.fileDescriptor = -1
        unlink("\(path).\(rotation.keep)")
        for index in stride(from: rotation.keep - 1, through: 1, by: -1) {
            Glibc.rename("\(path).\(index)", "\(path).\(index + 1)")
        }
        Glibc.rename(path, "\(path).1")
        try? Self.open(path, into: &state)
    }

    private static func open(_ path: String, into state: inout State) throws(SyncError) {
        let fd = Glibc.open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        if fd < 0 {
            throw SyncError.system("open", path: path, errno: errno, hint: "cannot open the log file")
        }
        var info = stat()
        fstat(fd, &info)
        state.fileDescriptor = fd
        state.size = Int(info.st_size)
        state.inode = info.st_ino
        state.lastCheck = .now
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and EINTR; gives up silently on an error.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return  // A log that cannot be written must not take the agent down.
                }
                offset += written
            }
        }
    }
}
