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
