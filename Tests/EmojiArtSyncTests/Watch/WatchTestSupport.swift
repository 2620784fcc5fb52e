@testable import EmojiArtSync
import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The parent of every Watch suite. Serialized to keep the descriptor and thread counts of the leak
/// tests quiet: they allow for what other folders' suites open meanwhile, but not for a dozen
/// watcher tests of our own starting and stopping at the same time.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct WatchTests {}

/// A fresh directory under /tmp for one test, removed (with everything in it) when released.
final class WatchScratchDirectory {
    let path: String

    init(_ label: String = "watch") throws {
        var template = Array("/tmp/emojiart-\(label)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard let made else { throw SyscallFailure(call: "mkdtemp", path: "/tmp") }
        path = String(cString: made)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// `path/name`.
    func file(_ name: String) -> String { path + "/" + name }
}

/// A failed system call in a test's setup, with errno.
struct SyscallFailure: Error, CustomStringConvertible {
    let call: String
    let path: String
    let code: Int32

    init(call: String, path: String, code: Int32 = errno) {
        self.call = call
        self.path = path
        self.code = code
    }

    var description: String { "\(call)(\(path)) failed: \(String(cString: strerror(code))) (errno \(code))" }
}

/// Plain POSIX file operations, so each test knows exactly which system calls produce its events.
enum POSIX {
    /// `open(path, flags, 0644)`, `write(bytes)` (if any), `close`.
    static func write(_ bytes: [UInt8], to path: String, flags: Int32 = O_WRONLY | O_CREAT | O_TRUNC) throws {
        let fd = open(path, flags | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SyscallFailure(call: "open", path: path) }
        defer { close(fd) }
        if !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard written == bytes.count else { throw SyscallFailure(call: "write", path: path) }
        }
    }

    static func unlink(_ path: String) throws {
        guard Glibc.unlink(path) == 0 else { throw SyscallFailure(call: "unlink", path: path) }
    }

    static func rename(_ from: String, _ to: String) throws {
        guard Glibc.rename(from, to) == 0 else { throw SyscallFailure(call: "rename", path: from) }
    }

    static func chmod(_ path: String, _ mode: mode_t) throws {
        guard Glibc.chmod(path, mode) == 0 else { throw SyscallFailure(call: "chmod", path: path) }
    }

    static func mkdir(_ path: String) throws {
        guard Glibc.mkdir(path, 0o755) == 0 else { throw SyscallFailure(call: "mkdir", path: path) }
    }

    static func rmdir(_ path: String) throws {
        guard Glibc.rmdir(path) == 0 else { throw SyscallFailure(call: "rmdir", path: path) }
    }
}

/// Consumes a watcher's stream in a task of its own and keeps everything it saw, so that tests can
/// wait for a condition with a deadline instead of awaiting `next()` (cancelling a task that awaits an
/// `AsyncStream` would terminate the stream).
final class WatchRecorder: Sendable {
    /// What the stream delivered so far.
    struct Snapshot: Sendable {
        var batches: [[WatchEvent]] = []
        var finished = false

        var events: [WatchEvent] { batches.flatMap { $0 } }

        /// Some event names `name` and has every bit of `mask`.
        func contains(_ mask: InotifyMask, _ name: String?) -> Bool {
            events.contains { $0.name == name && $0.mask.isSuperset(of: mask) }
        }
    }

    private let state = Mutex(Snapshot())

    init(_ events: AsyncStream<[WatchEvent]>) {
        Task { [self] in
            for await batch in events {
                state.withLock { $0.batches.append(batch) }
            }
            state.withLock { $0.finished = true }
        }
    }

    var snapshot: Snapshot { state.withLock { $0 } }

    /// Waits until `condition` holds (polled by `eventually`) for at most `timeout`; records an
    /// issue naming `what` and the events seen if the deadline passes. Returns the last snapshot.
    @discardableResult
    func wait(
        for what: String, timeout: Duration = .seconds(20), sourceLocation: SourceLocation = #_sourceLocation,
        until condition: (Snapshot) -> Bool
    ) async -> Snapshot {
        var current = snapshot
        let held = await eventually(timeout: timeout) {
            current = snapshot
            return condition(current)
        }
        if !held {
            Issue.record(
                "timed out waiting for \(what); saw \(current.events) finished=\(current.finished)",
                sourceLocation: sourceLocation)
        }
        return current
    }
}

extension ProcessResources {
    /// Threads of any ``DirectoryWatcher`` (they are named `dirwatch-N`).
    var watcherThreads: Int { threads(prefixed: "dirwatch-") }
}
