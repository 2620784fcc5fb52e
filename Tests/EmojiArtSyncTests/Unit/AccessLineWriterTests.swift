@testable import EmojiArtSync
import Foundation
import Logging
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The direct access line (`AccessLineWriter`) against the swift-log path it replaces: the same bytes in both
/// formats, on the file and on standard error; only the file under the journal; the configured level; and a
/// stuck log writer, which costs the silo's append no wait.
@Suite(.timeLimit(.minutes(1)))
struct AccessLineWriterTests {
    /// Fields with every kind of value: a key that needs quoting, a file name with a U+2028 (escaped in JSON,
    /// kept in logfmt), a plain one.
    static let accesses: [(key: String, hit: String, bytes: Int, file: String)] = [
        ("/gallery/image/12345.png", "memory", 1234, "gallery_image_12345_png.png"),
        ("/gallery/image?id=7 \"x\"\\", "disk", 0, "gallery_image_id_7\u{2028}.png"),
        ("/gallery/é☃🎨\u{7}", "network", 9_876_543_210, "a b"),
    ]

    static func metadata(_ access: (key: String, hit: String, bytes: Int, file: String)) -> Logger.Metadata {
        ["event": "asset", "key": .string(access.key), "hit": .string(access.hit),
         "bytes": .stringConvertible(access.bytes), "file": .string(access.file)]
    }

    static func read(_ path: String) -> [String] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// A line with its timestamp (logfmt's `ts=` field, JSON's `"ts"` value) replaced, for lines written at
    /// different moments.
    static func withoutTimestamp(_ line: String) -> String {
        line.replacing(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/, with: "TS")
    }

    @Test(arguments: LogFormat.allCases)
    func theDirectLineIsTheSwiftLogLineByteForByte(format: LogFormat) throws {
        // At fixed times, the timestamp included: the same millisecond twice (the cached text), the next one,
        // the last millisecond of a second and the first of the next.
        let times = [1_795_000_000.1234, 1_795_000_000.1236, 1_795_000_000.1251, 1_795_000_000.9995, 1_795_000_001.0004]
        let dir = TemporaryDirectory("accessline-bytes")
        let sink = try LogSink(path: dir.file("sync.log"), alsoStandardError: false, format: format)
        var writer = AccessLineWriter(sink: sink, level: .info, format: format)
        var expected: [String] = []
        for time in times {
            for access in Self.accesses {
                let date = Date(timeIntervalSince1970: time)
                writer.add(key: access.key, hit: access.hit, bytes: access.bytes, file: access.file, at: date)
                expected.append(format.line(timestamp: date, level: .info, message: "asset", metadata: Self.metadata(access)))
            }
        }
        #expect(writer.pendingLines == expected.count)
        let taken = writer.append()
        #expect(taken && writer.pendingLines == 0)
        sink.flush()
        #expect(Self.read(dir.file("sync.log")) == expected)
    }

    /// The line of an `AssetKey` (its url and file name read in place) is the swift-log line too, whether the key
    /// was found to need no quotes when it was made (`AssetKey.logsAsIs`: its bytes go in unscanned) or not: a url
    /// with `=`, a recorded name with a space or an `=`.
    @Test(arguments: LogFormat.allCases)
    func aKeysLineIsTheSwiftLogLineWhateverItsKeyNeeds(format: LogFormat) throws {
        let keys: [(key: AssetKey, logsAsIs: Bool)] = [
            (try AssetKey(feedURL: "/gallery/image?3"), true),
            (try AssetKey(feedURL: "/gallery/image/12345.png"), true),
            (try AssetKey(feedURL: "/gallery/image?id=7"), false),
            (try AssetKey(indexedURL: "/gallery/image?9", fileName: "my picture.png"), false),
            (try AssetKey(indexedURL: "/gallery/image?10", fileName: "a=b.png"), false),
        ]
        let dir = TemporaryDirectory("accessline-keys")
        let sink = try LogSink(path: dir.file("sync.log"), alsoStandardError: false, format: format)
        var writer = AccessLineWriter(sink: sink, level: .info, format: format)
        var expected: [String] = []
        let date = Date(timeIntervalSince1970: 1_795_000_000.5)
        for (key, logsAsIs) in keys {
            #expect(key.logsAsIs == logsAsIs, "\(key) \(key.fileName)")
            writer.add(key, hit: "disk", bytes: 106, at: date)
            expected.append(format.line(timestamp: date, level: .info, message: "asset", metadata: Self.metadata(
                (key: key.rawValue, hit: "disk", bytes: 106, file: key.fileName))))
        }
        let taken = writer.append()
        #expect(taken)
        sink.flush()
        #expect(Self.read(dir.file("sync.log")) == expected)
    }

    /// Failures of every kind the log writes: a first one (warning), one on record (`remembered`), the same one
    /// again (debug), with errors that need quoting and escaping.
    static let failures: [(key: String, error: String, remembered: Bool, level: Logger.Level)] = [
        ("/gallery/image/12345.png", "http://h/gallery/image/12345.png answered 404", false, .warning),
        ("/gallery/image?id=7 \"x\"\\", "not a PNG: the data starts \"{\\\"error\\\": \"\n\u{2028}\t", true, .warning),
        ("/gallery/é☃🎨\u{7}", "plain", true, .debug),
        ("/k", "", false, .debug),
    ]

    static func metadata(_ failure: (key: String, error: String, remembered: Bool, level: Logger.Level)) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "event": "asset", "key": .string(failure.key), "result": "failed", "error": .string(failure.error),
        ]
        if failure.remembered { metadata["remembered"] = "true" }
        return metadata
    }

    @Test(arguments: LogFormat.allCases)
    func theDirectFailureLineIsTheSwiftLogLineByteForByte(format: LogFormat) throws {
        let dir = TemporaryDirectory("accessline-failure")
        let sink = try LogSink(path: dir.file("sync.log"), alsoStandardError: false, format: format)
        var writer = AccessLineWriter(sink: sink, level: .info, format: format)
        var expected: [String] = []
        for (offset, failure) in Self.failures.enumerated() {
            let date = Date(timeIntervalSince1970: 1_795_000_000.1234 + Double(offset))
            writer.addFailure(
                key: failure.key, error: failure.error, remembered: failure.remembered, level: failure.level, at: date)
            expected.append(format.line(
                timestamp: date, level: failure.level, message: "asset unavailable", metadata: Self.metadata(failure)))
            let access = Self.accesses[offset % Self.accesses.count]
            writer.add(key: access.key, hit: access.hit, bytes: access.bytes, file: access.file, at: date)
            expected.append(format.line(timestamp: date, level: .info, message: "asset", metadata: Self.metadata(access)))
        }
        #expect(writer.pendingLines == expected.count)
        let taken = writer.append()
        #expect(taken)
        sink.flush()
        #expect(Self.read(dir.file("sync.log")) == expected)
    }

    /// Through real sinks, with standard error a file: the logger's line and the direct one, interleaved with
    /// other lines, land in the same order with the same text (but the moment) in the file and on stderr.
    @Test(arguments: LogFormat.allCases)
    func theTwoPathsWriteTheSameLinesInOrderToTheFileAndStandardError(format: LogFormat) throws {
        let dir = TemporaryDirectory("accessline-paths")
        let stderr = StandardErrorFile(dir)
        let sink = try LogSink(
            path: dir.file("sync.log"), alsoStandardError: true, format: format,
            standardErrorDescriptor: stderr.descriptor, environment: [:])
        let logger = Logger(label: "test") { _ in LogfmtLogHandler(sink: sink, level: .info, format: format) }
        var writer = AccessLineWriter(sink: sink, level: .info, format: format)
        for access in Self.accesses {
            logger.info("asset", metadata: Self.metadata(access))
            logger.notice("between", metadata: ["event": "poll"])
            writer.write(key: access.key, hit: access.hit, bytes: access.bytes, file: access.file)
        }
        sink.flush()
        let lines = Self.read(dir.file("sync.log")).map(Self.withoutTimestamp)
        #expect(lines.count == 3 * Self.accesses.count)
        for (index, triple) in stride(from: 0, to: lines.count, by: 3).enumerated() {
            #expect(lines[triple] == lines[triple + 2], "access \(index): the swift-log line, then the direct one")
            #expect(lines[triple + 1].contains("between"))
        }
        #expect(Self.read(stderr.path).map(Self.withoutTimestamp) == lines, "stderr has the file's lines")
    }

    /// Under the journal, with a log file: the access lines (direct, or through swift-log) stay in the file;
    /// the journal gets a repair, a failure. Without a log file, the journal is the only log: it gets them all,
    /// the direct line in the journal's form just as swift-log's (logfmt: no `ts=`; JSON: the whole object).
    @Test(arguments: [true, false], LogFormat.allCases)
    func onTheJournalAccessLinesStayInTheLogFile(withLogFile: Bool, format: LogFormat) throws {
        let dir = TemporaryDirectory("accessline-journal")
        let journal = StandardErrorFile(dir, name: "journal")
        let sink = try LogSink(
            path: withLogFile ? dir.file("sync.log") : nil, alsoStandardError: true, format: format,
            standardErrorDescriptor: journal.descriptor, environment: ["JOURNAL_STREAM": journal.journalStream])
        #expect(sink.standardErrorIsJournal)
        let logger = Logger(label: "test") { _ in LogfmtLogHandler(sink: sink, level: .debug, format: format) }
        var writer = AccessLineWriter(sink: sink, level: .debug, format: format)
        let access = Self.accesses[1]

        logger.info("re-fetching damaged asset", metadata: ["event": "repair", "reason": "missing", "key": "/k"])
        logger.info("asset", metadata: Self.metadata(access))
        writer.write(key: access.key, hit: access.hit, bytes: access.bytes, file: access.file)
        logger.warning("asset unavailable", metadata: ["event": "asset", "key": "/f", "result": "failed", "error": "e"])
        logger.debug("asset unavailable", metadata: ["event": "asset", "key": "/f", "result": "failed", "error": "e"])
        // The same two failures, written directly: the warning goes to the journal too, the debug line as above.
        writer.addFailure(key: "/f", error: "e", remembered: false, level: .warning)
        writer.addFailure(key: "/f", error: "e", remembered: false, level: .debug)
        writer.append()
        sink.flush()

        let journalLines = Self.read(journal.path)
        if withLogFile {
            try #require(journalLines.map { $0.prefix(3) } == ["<6>", "<4>", "<4>"])
            #expect(journalLines[0].contains("repair") && journalLines[1].contains("failed"))
            #expect(Self.withoutTimestamp(journalLines[1]) == Self.withoutTimestamp(journalLines[2]))
            let file = Self.read(dir.file("sync.log")).map(Self.withoutTimestamp)
            try #require(file.count == 7)
            #expect(file[1] == file[2], "both access lines in the file, the same")
            #expect(file[3] == file[5] && file[4] == file[6], "both failure lines in the file, the same")
        } else {
            try #require(journalLines.map { $0.prefix(3) } == ["<6>", "<6>", "<6>", "<4>", "<7>", "<4>", "<7>"])
            #expect(Self.withoutTimestamp(journalLines[1]) == Self.withoutTimestamp(journalLines[2]))
            #expect(Self.withoutTimestamp(journalLines[3]) == Self.withoutTimestamp(journalLines[5]))
            #expect(Self.withoutTimestamp(journalLines[4]) == Self.withoutTimestamp(journalLines[6]))
            #expect(format == .json || journalLines[2].hasPrefix("<6>level=info msg=asset event=asset bytes=0 "))
        }
    }

    @Test func aLevelAboveInfoWritesNoAccessLine() throws {
        let dir = TemporaryDirectory("accessline-level")
        let sink = try LogSink(path: dir.file("sync.log"), alsoStandardError: false)
        var quiet = AccessLineWriter(sink: sink, level: .warning, format: .logfmt)
        quiet.add(key: "/k", hit: "disk", bytes: 1, file: "k.png")
        #expect(!quiet.isEnabled && quiet.pendingLines == 0)
        let taken = quiet.append()
        #expect(taken)
        var debug = AccessLineWriter(sink: sink, level: .debug, format: .logfmt)
        debug.write(key: "/k", hit: "disk", bytes: 1, file: "k.png")
        sink.flush()
        #expect(Self.read(dir.file("sync.log")).count == 1)
    }

    /// The log is a FIFO nobody reads, so the writer thread blocks. The silo's appends fill the 4 MiB buffer,
    /// then each is dropped at once (a caller that waits for room would wait a whole second, once), counted,
    /// and the writer's `dropped=N` line says how many once it can write again; the other lines in order.
    @Test func aStuckLogNeverMakesTheSiloWait() async throws {
        let dir = TemporaryDirectory("accessline-stuck")
        let fifo = UnreadLogFIFO(dir)
        var sink: LogSink? = try LogSink(path: fifo.path, alsoStandardError: false)
        let silo = await AccessLog(sink: sink!)  // the silo's alone

        let (written, droppedLines, takenAfterFull) = await silo.fillThenDrop(batches: 100)
        #expect(takenAfterFull == 0, "the buffer stays full while the writer is stuck")
        #expect(sink?.waitsForRoom == 0, "an append waited for room")
        sink = nil  // the silo's alone again: closing it closes the file

        let text = await fifo.readToEnd { await silo.close() }
        let dropped = UnreadLogFIFO.droppedCount(in: text)
        let numbers = text.filter { $0.contains("event=asset") }.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("bytes=") }.flatMap { Int($0.dropFirst(6)) }
        }
        #expect(dropped == droppedLines && numbers.count == written, "\(dropped) dropped, \(numbers.count) written")
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 }, "in order")
    }
}

/// What the lead's access log does with the writer: it lives in a `@SyncActor` class and appends from there.
@SyncActor
private final class AccessLog {
    private var lines: AccessLineWriter?
    private var sink: LogSink?

    init(sink: LogSink) {
        self.sink = sink
        lines = AccessLineWriter(sink: sink, level: .info, format: .logfmt)
    }

    /// Appends batches of 64 lines (numbered by their `bytes=`) until one is dropped, then `batches` more;
    /// returns the lines taken, the lines dropped, and how many of the last batches were taken.
    func fillThenDrop(batches: Int) -> (written: Int, dropped: Int, takenAfterFull: Int) {
        var number = 0, written = 0, dropped = 0
        func batch() -> Bool {
            for _ in 0..<64 {
                lines?.add(key: "/gallery/image/\(number).png", hit: "memory", bytes: number, file: "gallery_image_\(number).png")
                number += 1
            }
            let taken = lines?.append() ?? false
            if taken { written += 64 } else { dropped += 64 }
            return taken
        }
        while batch() && number < 1_000_000 {}
        let taken = (0..<batches).count(where: { _ in batch() })
        return (written, dropped, taken)
    }

    /// Lets the sink go: it writes what it holds (the reader drains the FIFO) and closes the file.
    func close() {
        sink?.shutdown()
        (lines, sink) = (nil, nil)
    }
}
