@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The log file: buffered lines reach it within the flush bound, on flush, on shutdown and when the sink
/// goes away; size rotation; following an outside rotation (logrotate's rename); a stuck file.
@Suite(.timeLimit(.minutes(1)))
struct LogSinkTests {
    static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    static func numbered(_ count: Int) -> [String] {
        (0..<count).map { "line \($0) " + String(repeating: "x", count: 40) }
    }

    /// A sink on `sync.log` in a new directory, `count` numbered lines written to it, and the text they make.
    static func logging(_ count: Int, label: String) throws -> (dir: TemporaryDirectory, path: String, sink: LogSink, text: String) {
        let dir = TemporaryDirectory(label)
        let path = dir.file("sync.log")
        let sink = try LogSink(path: path, alsoStandardError: false)
        let lines = numbered(count)
        for line in lines { sink.write(line: line) }
        return (dir, path, sink, lines.map { $0 + "\n" }.joined())
    }

    @Test func rotatesBySizeKeepingTheConfiguredNumberOfFiles() throws {
        let dir = TemporaryDirectory("logsink")
        let path = dir.file("sync.log")
        let sink = try LogSink(path: path, alsoStandardError: false, rotation: LogSink.Rotation(maxBytes: 2048, keep: 3))
        let line = String(repeating: "x", count: 99)  // 100 bytes with the newline
        for _ in 0..<200 { sink.write(line: line) }   // 20,000 bytes: many rotations
        sink.flush()
        #expect(dir.names() == ["sync.log", "sync.log.1", "sync.log.2", "sync.log.3"])
        for name in dir.names() {
            let size = try #require(FileManager.default.attributesOfItem(atPath: dir.file(name))[.size] as? Int)
            #expect(size <= 2048, "\(name) is \(size) bytes")
            #expect(size % 100 == 0, "\(name) holds a partial line")
        }
    }

    @Test func aLineLongerThanTheLimitGetsAFileOfItsOwn() throws {
        let dir = TemporaryDirectory("logsink-long")
        let path = dir.file("sync.log")
        let sink = try LogSink(path: path, alsoStandardError: false, rotation: LogSink.Rotation(maxBytes: 1024, keep: 5))
        let long = String(repeating: "L", count: 3000)
        for line in ["a", long, "b"] { sink.write(line: line) }
        sink.flush()
        #expect(Self.read(dir.file("sync.log.2")) == "a\n")
        #expect(Self.read(dir.file("sync.log.1")) == long + "\n")
        #expect(Self.read(path) == "b\n")
    }

    @Test func followsAnOutsideRotationWithinASecondOfTheNextWrite() async throws {
        let dir = TemporaryDirectory("logsink-outside")
        let path = dir.file("sync.log")
        let sink = try LogSink(path: path, alsoStandardError: false)
        sink.write(line: "before")
        sink.flush()
        #expect(rename(path, dir.file("sync.log.old")) == 0)  // what logrotate does
        // The sink checks the path at most once a second, on a write: write until a line lands at the path.
        var written = 0
        let followed = await eventually(timeout: .seconds(10)) {
            sink.write(line: "after")
            written += 1
            sink.flush()
            return FileManager.default.fileExists(atPath: path)
        }
        #expect(followed)
        let old = Self.read(dir.file("sync.log.old")).split(separator: "\n")
        let new = Self.read(path).split(separator: "\n")
        #expect(old.first == "before" && old.dropFirst().allSatisfy { $0 == "after" })
        #expect(!new.isEmpty && new.allSatisfy { $0 == "after" })
        #expect(old.count - 1 + new.count == written, "no line lost")
        sink.reopen()
        sink.write(line: "again")
        sink.flush()
        #expect(Self.read(path).hasSuffix("after\nagain\n"))
    }

    @Test func linesReachTheFileWithinTheFlushBoundWithoutAFlush() async throws {
        let (dir, path, sink, expected) = try Self.logging(3, label: "logsink-bound")
        #expect(await eventually(timeout: .seconds(10)) { Self.read(path) == expected }, "\(Self.read(path))")
        withExtendedLifetime((dir, sink)) {}
    }

    @Test func shutdownWritesEverythingAndLaterLinesAreWrittenAtOnce() throws {
        let (dir, path, sink, expected) = try Self.logging(20_000, label: "logsink-shutdown")
        sink.shutdown()
        #expect(Self.read(path) == expected)
        sink.write(line: "after shutdown")
        #expect(Self.read(path).hasSuffix("\nafter shutdown\n"))
        sink.shutdown()  // idempotent
        withExtendedLifetime(dir) {}
    }

    @Test func anAsyncCallerCanWaitForItsLinesWithoutBlockingAThread() async throws {
        let (dir, path, sink, expected) = try Self.logging(5000, label: "logsink-async")
        await sink.waitUntilWritten()
        #expect(Self.read(path) == expected)
        sink.shutdown()
        await sink.waitUntilWritten()  // returns at once: nothing can be pending
        withExtendedLifetime(dir) {}
    }

    /// A sink without a file (stderr only, here not even that) after its writer stopped: nothing can be left
    /// waiting for a writer that is gone (a wait for it would never end).
    @Test func aSinkWithoutAFileHasNothingPendingOnceStopped() async throws {
        let sink = try LogSink(path: nil, alsoStandardError: false)
        sink.write(line: "before")
        sink.shutdown()
        sink.write(line: "after")
        await sink.waitUntilWritten()
        sink.flush()
        sink.reopen()
    }

    @Test func aSinkThatGoesAwayWritesWhatItHeld() throws {
        let dir = TemporaryDirectory("logsink-deinit")
        let path = dir.file("sync.log")
        let lines = Self.numbered(1000)
        do {
            let sink = try LogSink(path: path, alsoStandardError: false)
            for line in lines { sink.write(line: line) }
        }
        #expect(Self.read(path) == lines.map { $0 + "\n" }.joined())
    }

    @Test func reopenWritesWhatWasQueuedToTheOldFileFirst() throws {
        let dir = TemporaryDirectory("logsink-reopen")
        let path = dir.file("sync.log")
        let sink = try LogSink(path: path, alsoStandardError: false)
        sink.write(line: "queued before the rename")
        #expect(rename(path, dir.file("sync.log.1")) == 0)
        sink.reopen()
        sink.write(line: "after")
        sink.flush()
        #expect(Self.read(dir.file("sync.log.1")) == "queued before the rename\n")
        #expect(Self.read(path) == "after\n")
    }

    /// The log is a FIFO nobody reads, so the writer thread blocks for good: `shutdown()`, which every exit path of
    /// the agent calls, gives it `LogWriter.shutdownWait` and then leaves it, and a line logged after that is
    /// dropped instead of blocking its caller. (It joined the writer: a `--once` run with its log on a full pipe
    /// never exited.)
    @Test func aStuckLogNeverHoldsTheExit() throws {
        // The FIFO's reader closes at the end of the test, when the writer may still be in its `write(2)`: an
        // error for it then, as for the agent under systemd (`IgnoreSIGPIPE=yes`), not a signal for this process.
        signal(SIGPIPE, SIG_IGN)
        let dir = TemporaryDirectory("logsink-stuck-exit")
        let fifo = UnreadLogFIFO(dir)
        let sink = try LogSink(path: fifo.path, alsoStandardError: false)
        for line in Self.numbered(200_000) { sink.write(line: line) }  // more than the pipe and the buffer hold
        sink.shutdown()  // returns: the point of the test
        #expect(!sink.write(line: "after the end", journalLine: { "" }), "a line after the end was taken")
        _ = consume fifo
    }

    /// The log is a FIFO nobody reads, so the writer thread blocks: callers fill the 4 MiB buffer, the next
    /// one waits for room once, then lines are dropped at once, counted, and reported in one `dropped=N` line
    /// when the writer moves again. No caller blocks for good, no line goes missing without a count.
    @Test func aStuckLogDropsLinesWithACountInsteadOfBlocking() async throws {
        let dir = TemporaryDirectory("logsink-stuck")
        let fifo = UnreadLogFIFO(dir)
        var sink: LogSink? = try LogSink(path: fifo.path, alsoStandardError: false)
        let lines = Self.numbered(200_000)  // 10 MB: more than the pipe, a batch being written and the buffer hold
        for line in lines { sink?.write(line: line) }  // returns: the point of the test
        #expect(sink?.waitsForRoom == 1, "one caller waited for room, once")

        let text = await fifo.readToEnd { sink = nil }
        let dropped = UnreadLogFIFO.droppedCount(in: text)
        let numbers = text.filter { $0.hasPrefix("line ") }.compactMap { Int($0.split(separator: " ")[1]) }
        #expect(dropped > 0)
        #expect(numbers.count + dropped == lines.count, "every line written or counted as dropped")
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 }, "in order")
    }
}
