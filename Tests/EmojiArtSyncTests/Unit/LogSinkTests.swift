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

    @Test func followsAnOutsideRotationWithinASecond() async throws {
        let dir = TemporaryDirectory("logsink-outside")
        let path = dir.file("sync.log")
        let sink = try LogSink(path: path, alsoStandardError: false)
        sink.write(line: "before")
        #expect(rename(path, dir.file("sync.log.old")) == 0)  // what logrotate does
        try await Task.sleep(for: .milliseconds(1100))
        sink.write(line: "after")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "after\n")
        #expect(try String(contentsOfFile: dir.file("sync.log.old"), encoding: .utf8) == "before\n")
        sink.reopen()
        sink.write(line: "again")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "after\nagain\n")
    }
}
