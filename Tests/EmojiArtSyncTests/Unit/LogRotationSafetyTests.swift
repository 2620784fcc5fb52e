@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Rotation renames nothing but the regular file the sink writes: a log path that is a symbolic link is written
/// through and never rotated (renaming it would move the link, and as root `--log-file /dev/stdout` would have
/// renamed `/dev/stdout`).
@Suite(.timeLimit(.minutes(1)))
struct LogRotationSafetyTests {
    private static let line = String(repeating: "x", count: 99)  // 100 bytes with the newline

    private static func isSymbolicLink(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFLNK
    }

    @Test func aSymlinkedLogIsWrittenThroughAndNeverRenamed() throws {
        let dir = TemporaryDirectory("log-symlink")
        let target = dir.file("real.log")
        let link = dir.file("sync.log")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let sink = try LogSink(path: link, alsoStandardError: false, rotation: LogSink.Rotation(maxBytes: 2048, keep: 2))
        #expect(!sink.rotates)
        for _ in 0..<100 { sink.write(line: Self.line) }  // 10,000 bytes: five rotations' worth
        sink.shutdown()
        #expect(Self.isSymbolicLink(link), "the link was renamed or replaced")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
        #expect(dir.names() == ["real.log", "sync.log"], "rotation created or renamed files: \(dir.names())")
        let size = try #require(FileManager.default.attributesOfItem(atPath: target)[.size] as? Int)
        #expect(size == 10_000, "every line went through the link")
    }

    @Test func anAgentSaysOnceThatItsSymlinkedLogIsNotRotated() async throws {
        let dir = TemporaryDirectory("log-symlink-agent")
        try FileManager.default.createSymbolicLink(atPath: dir.file("link.log"), withDestinationPath: dir.file("real.log"))
        var configuration = AgentConfiguration(directory: SyncDirectory(dir.file("mirror")))
        configuration.logging.file = dir.file("link.log")
        configuration.logging.toStandardError = false
        let agent = try await SyncAgent(configuration: configuration)
        agent.shutdown()
        let text = (try? String(contentsOfFile: dir.file("real.log"), encoding: .utf8)) ?? ""
        #expect(text.split(separator: "\n").filter { $0.contains("event=log") && $0.contains("rotation=off") }.count == 1, "\(text)")
    }

    @Test func aRegularFileReplacedByALinkIsNotRenamed() throws {
        let dir = TemporaryDirectory("log-swapped")
        let path = dir.file("sync.log")
        let sink = try LogSink(path: path, alsoStandardError: false, rotation: LogSink.Rotation(maxBytes: 2048, keep: 2))
        #expect(sink.rotates)
        sink.write(line: Self.line)
        sink.flush()
        // Someone puts a link where the file was, to a file of theirs.
        let theirs = dir.file("theirs")
        try writeBytes(Array("mine\n".utf8), to: theirs)
        unlink(path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: theirs)
        for _ in 0..<30 { sink.write(line: Self.line) }  // passes 2,048 bytes: a rotation is due
        sink.shutdown()
        #expect(Self.isSymbolicLink(path), "the link was renamed")
        #expect(!FileManager.default.fileExists(atPath: path + ".1") || !Self.isSymbolicLink(path + ".1"))
    }
}
