import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Where log lines go: an append-only log file and, optionally, standard error.
///
/// Owns the log file descriptor. Lines from any thread are serialised by a mutex so that each line is
/// written with a single `write(2)` and lines never interleave. A sink is shared by every logger of a run.
public final class LogSink: Sendable {
    private struct State {
        var fileDescriptor: Int32
    }

    /// The log file's path, or nil when the sink writes to stderr only.
    public let path: String?
    private let alsoStandardError: Bool
    private let state: Mutex<State>

    /// Opens (creating when needed, mode 0644) `path` for appending.
    public init(path: String?, alsoStandardError: Bool) throws(SyncError) {
        self.path = path
        self.alsoStandardError = alsoStandardError
        var fd: Int32 = -1
        if let path {
            fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
            if fd < 0 {
                throw SyncError.system("open", path: path, errno: errno, hint: "cannot open the log file")
            }
        }
        self.state = Mutex(State(fileDescriptor: fd))
    }

    deinit {
        state.withLock { state in
            if state.fileDescriptor >= 0 { close(state.fileDescriptor) }
        }
    }

    /// Writes one line (a newline is appended).
    public func write(line: String) {
        var bytes = Array(line.utf8)
        bytes.append(0x0A)
        state.withLock { state in
            if state.fileDescriptor >= 0 {
                Self.writeAll(state.fileDescriptor, bytes)
            }
        }
        if alsoStandardError {
            state.withLock { _ in Self.writeAll(STDERR_FILENO, bytes) }
        }
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) {
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
