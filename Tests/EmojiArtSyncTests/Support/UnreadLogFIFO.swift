import Foundation
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A log path that is a FIFO nobody reads, so that a sink writing to it gets stuck once the pipe is full; then
/// `readToEnd()` drains it and returns the lines, and `droppedCount(in:)` adds up the writer's `dropped=N`.
struct UnreadLogFIFO: ~Copyable {
    let path: String
    private let reader: Int32

    /// Makes the FIFO `name` in `dir` and opens its read end without blocking, so that the sink's open does not
    /// wait for a reader.
    init(_ dir: TemporaryDirectory, name: String = "sync.log") {
        path = dir.file(name)
        #expect(mkfifo(path, 0o644) == 0)
        reader = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        #expect(reader >= 0)
    }

    deinit { close(reader) }

    /// Reads the FIFO to its end on a thread of its own, starting now: the end comes once `release()` has let
    /// the sink go (it writes everything and closes the file), or with the line `last`, for a sink something
    /// else keeps open (an agent's). Returns the lines read.
    func readToEnd(through last: String? = nil, after release: () async -> Void) async -> [Substring] {
        let received = Mutex<[UInt8]?>(nil)
        let reader = reader
        let ending = last.map { Array("\n\($0)\n".utf8) }
        _ = fcntl(reader, F_SETFL, 0)  // blocking reads from here on
        Thread.detachNewThread {
            var all = [UInt8](), chunk = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = Glibc.read(reader, &chunk, chunk.count)
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                all += chunk[..<count]
                if let ending, all.count >= ending.count, all.suffix(ending.count).elementsEqual(ending) { break }
            }
            received.withLock { $0 = all }
        }
        await release()
        #expect(await eventually(timeout: .seconds(30)) { received.withLock { $0 != nil } })
        return String(decoding: received.withLock { $0 ?? [] }, as: UTF8.self).split(separator: "\n")
    }

    /// The writer's `event=log dropped=N` lines in `lines` (each must be a warning), N added up.
    static func droppedCount(in lines: [Substring]) -> Int {
        let notices = lines.filter { $0.contains("event=log") && $0.contains("dropped=") }
        #expect(notices.allSatisfy { $0.contains("level=warning") }, "\(notices)")
        return notices.compactMap { notice in
            notice.split(separator: " ").first { $0.hasPrefix("dropped=") }.flatMap { Int($0.dropFirst(8)) }
        }.reduce(0, +)
    }
}

/// A file standing in for standard error (`LogSink`'s package initializer writes there), and the
/// `JOURNAL_STREAM` value that makes it the journal.
struct StandardErrorFile: ~Copyable {
    let path: String
    let descriptor: Int32

    init(_ dir: TemporaryDirectory, name: String = "stderr") {
        path = dir.file(name)
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        #expect(descriptor >= 0)
    }

    deinit { close(descriptor) }

    /// `DEVICE:INODE`, as systemd writes it.
    var journalStream: String {
        var info = stat()
        #expect(fstat(descriptor, &info) == 0)
        return "\(info.st_dev):\(info.st_ino)"
    }
}
