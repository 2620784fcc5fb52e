import EmojiArtSync
import Foundation
import Testing

/// The log file: size rotation, and following an outside rotation (logrotate's rename).
@Suite(.timeLimit(.minutes(1)))
struct LogSinkTests {
    @Test func rotatesBySizeKeepingTheConfiguredNumberOfFiles() throws {
        let dir = TemporaryDirectory("logsink")
        let path = dir.file("sync.log")
        let sink = try LogSink(path: path, alsoStandardError: false, rotation: LogSink.Rotation(maxBytes: 2048, keep: 3))
        let line = String(repeating: "x", count: 99)  // 100 bytes with the newline
        for _ in 0..<200 { sink.write(line: line) }   // 20,000 bytes: many rotations
        #expect(dir.names() == ["sync.log", "sync.log.1", "sync.log.2", "sync.log.3"])
        for name in dir.names() {
            let size = try #require(FileManager.default.attributesOfItem(atPath: dir.file(name))[.size] as? Int)
            #expect(size <= 2048, "\(name) is \(size) bytes")
            #expect(size % 100 == 0, "\(name) holds a partial line")
        }
    }

    /// The sink notices at most once a second that its path was renamed away: the test writes until a line
    /// lands in a new file at the path (the event it waits for, not a fixed sleep), and no line is lost on the
    /// way: the old file then the new one hold every line, in order.
    @Test func followsAnOutsideRotationWithinASecond() async throws {
        let dir = TemporaryDirectory("logsink-outside")
        let path = dir.file("sync.log")
        let sink = try LogSink(path: path, alsoStandardError: false)
        sink.write(line: "before")
        #expect(rename(path, dir.file("sync.log.old")) == 0)  // what logrotate does
        var written = ["before"]
        let followed = await eventually(timeout: .seconds(10)) {
            written.append("after \(written.count)")
            sink.write(line: written.last!)
            try? await Task.sleep(for: .milliseconds(10))
            return FileManager.default.fileExists(atPath: path)
        }
        try #require(followed, "the sink never reopened its path")
        let old = try String(contentsOfFile: dir.file("sync.log.old"), encoding: .utf8)
        let new = try String(contentsOfFile: path, encoding: .utf8)
        #expect(old.hasPrefix("before\n"))
        #expect(!new.isEmpty && !new.contains("before"))
        #expect(old + new == written.map { $0 + "\n" }.joined(), "every line, once, in order")
        sink.reopen()
        sink.write(line: "again")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == new + "again\n")
    }
}
