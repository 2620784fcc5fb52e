import Foundation
import TestSupport
import Testing

/// `concurrency = 8 # comment` in the config file: before, "--concurrency must be 1...256".
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ConfigFileCommentTests {
    @Test func aCommentAfterAValueIsIgnoredAndAHashInsideAValueIsKept() async throws {
        let out = TemporaryDirectory("comments-out")
        let xdg = TemporaryDirectory("comments-xdg")
        try FileManager.default.createDirectory(atPath: xdg.file("emojiart-sync"), withIntermediateDirectories: true)
        try writeBytes(Array("""
            concurrency = 8 # more for the LAN
            interval = 5m\t# tab before the comment
            log-file = /tmp/a#b.log
            server = "http://127.0.0.1:9" # quoted, then a comment
            dir = "/tmp/x # y"

            """.utf8), to: xdg.file("emojiart-sync/config"))
        let run = try await AgentProcess.run(["config"], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(run.status == 0, "\(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map { $0.split(separator: "#", maxSplits: 1).first.map { String($0).trimmingCharacters(in: .whitespaces) } ?? "" }
        #expect(lines.contains("concurrency = 8"), "\(run.stdout)")
        #expect(lines.contains("interval = 5m"), "\(run.stdout)")
        #expect(run.stdout.contains("log-file = /tmp/a#b.log"), "\(run.stdout)")
        #expect(lines.contains("server = http://127.0.0.1:9"), "\(run.stdout)")
        #expect(run.stdout.contains("dir = /tmp/x # y"), "\(run.stdout)")

        try writeBytes(Array("server = \"http://127.0.0.1:9\" trailing\n".utf8), to: xdg.file("emojiart-sync/config"))
        let bad = try await AgentProcess.run(["config"], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(bad.status == 64 && bad.stderr.contains("line 1") && bad.stderr.contains("after the closing quote"), "\(bad.stderr)")
        #expect(!bad.stderr.contains("Usage:"), "a file's error is not followed by the usage text: \(bad.stderr)")
    }
}

extension ConfigFileCommentTests {
    /// A config file that is there but cannot be read (a loop of links, a folder in its place; a folder on the way
    /// the user may not search, which root cannot be refused) is said in words, with status 64. Before, the message
    /// was Foundation's error dumped whole ("CocoaError(code: ... POSIXErrorCode.ELOOP ...)").
    @Test func anUnreadableConfigFileIsSaidInWords() async throws {
        let out = TemporaryDirectory("unreadable-out")
        let xdg = TemporaryDirectory("unreadable-xdg")
        try FileManager.default.createDirectory(atPath: xdg.file("emojiart-sync"), withIntermediateDirectories: true)
        let config = xdg.file("emojiart-sync/config")
        #expect(symlink(config, config) == 0)
        let loop = try await AgentProcess.run(["config"], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(loop.status == 64, "\(loop.stderr)")
        #expect(loop.stderr == "emojiart-sync: cannot read the config file \(config): Too many levels of symbolic links\n", "\(loop.stderr)")
        #expect(unlink(config) == 0 && mkdir(config, 0o755) == 0)
        let folder = try await AgentProcess.run(["--once", "--dir", out.file("emoji")], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(folder.status == 64, "\(folder.stderr)")
        #expect(folder.stderr == "emojiart-sync: cannot read the config file \(config): it is a folder\n", "\(folder.stderr)")
    }
}
