import Foundation
import TestSupport
import Testing

@testable import emojiart_sync

/// Path settings from the environment or the config file are expanded as a shell would (`~`, `$HOME`), and
/// `status`, `purge` and `scrub` find DIR exactly as a run does (flag, environment, file).
@Suite(.serialized, .timeLimit(.minutes(2)))
struct PathSettingTests {
    /// A home directory and an XDG config directory whose config file says `contents`.
    private func setUp(_ contents: String) throws -> (home: TemporaryDirectory, xdg: TemporaryDirectory) {
        let home = TemporaryDirectory("paths-home")
        let xdg = TemporaryDirectory("paths-xdg")
        try FileManager.default.createDirectory(atPath: xdg.file("emojiart-sync"), withIntermediateDirectories: true)
        try writeBytes(Array(contents.utf8), to: xdg.file("emojiart-sync/config"))
        return (home, xdg)
    }

    @Test func expansionIsTheShells() throws {
        let environment = ["HOME": "/home/ann", "DATA": "/srv/data"]
        #expect(try PathExpansion.expand("~/emoji", environment: environment) == "/home/ann/emoji")
        #expect(try PathExpansion.expand("~", environment: environment) == "/home/ann")
        #expect(try PathExpansion.expand("~root/x", environment: environment) == "/root/x")
        #expect(try PathExpansion.expand("$HOME/emoji", environment: environment) == "/home/ann/emoji")
        #expect(try PathExpansion.expand("${DATA}/emoji/$HOME", environment: environment) == "/srv/data/emoji//home/ann")
        #expect(try PathExpansion.expand("/a/b~/c$", environment: environment) == "/a/b~/c$", "a ~ inside, a $ at the end: literal")
        #expect(try PathExpansion.expand("/price$5", environment: environment) == "/price$5", "not a variable name")
        #expect(throws: PathExpansion.Failure.self) { try PathExpansion.expand("$NOT_SET_H18A/x", environment: environment) }
        #expect(throws: PathExpansion.Failure.self) { try PathExpansion.expand("~no-such-user-h18a/x", environment: environment) }
        #expect(try PathExpansion.expandTilde("$HOME/~x", environment: environment) == "$HOME/~x", "a flag's $ is the shell's")
    }

    /// Before: `dir = ~/mirror` named `./~/mirror`, and `$HOME` stayed literal.
    @Test func aTildeOrAVariableInTheFileOrTheEnvironmentIsExpanded() async throws {
        let out = TemporaryDirectory("paths-out")
        let (home, xdg) = try setUp("dir = ~/mirror\nlog-file = ${HOME}/logs/sync.log\n")
        let file = try await AgentProcess.run(["config"], outputDirectory: out.path, environment: ["HOME": home.path, "XDG_CONFIG_HOME": xdg.path])
        #expect(file.status == 0, "\(file.stderr)")
        #expect(file.stdout.contains("dir = \(home.path)/mirror "), "\(file.stdout)")
        #expect(file.stdout.contains("log-file = \(home.path)/logs/sync.log "), "\(file.stdout)")

        let environment = try await AgentProcess.run(
            ["config"], outputDirectory: out.path,
            environment: ["HOME": home.path, "XDG_CONFIG_HOME": xdg.path, "EMOJIART_SYNC_DIR": "$HOME/other"])
        #expect(environment.stdout.contains("dir = \(home.path)/other "), "\(environment.stdout)")

        let unset = try await AgentProcess.run(
            ["--once"], outputDirectory: out.path,
            environment: ["HOME": home.path, "XDG_CONFIG_HOME": xdg.path, "EMOJIART_SYNC_DIR": "$NOT_SET_H18A/x"])
        #expect(unset.status == 64, "an unset variable is not the empty word: \(unset.stderr)")
        #expect(unset.stderr.contains("NOT_SET_H18A") && unset.stderr.contains("EMOJIART_SYNC_DIR=$NOT_SET_H18A/x"), "\(unset.stderr)")
    }

    /// Before: `EMOJIART_SYNC_DIR=... emojiart-sync status` exited 64 with `Missing expected argument '--dir <dir>'`.
    @Test func statusPurgeAndScrubFindDirAsARunDoes() async throws {
        let gallery = try await GalleryFixture(count: 4)
        let out = TemporaryDirectory("paths-sub-out")
        let (home, xdg) = try setUp("dir = ~/mirror\nserver = \(gallery.baseURL)\nquiet = yes\n")
        let mirror = home.path + "/mirror"
        let fromFile = ["HOME": home.path, "XDG_CONFIG_HOME": xdg.path]
        let once = try await AgentProcess.run(["--once"], outputDirectory: out.path, environment: fromFile)
        #expect(once.status == 0, "\(once.stderr)")
        #expect(FileManager.default.fileExists(atPath: mirror + "/gallery_image_4.png"), "a run syncs into ~/mirror")
        await gallery.stop()

        let status = try await AgentProcess.run(["status"], outputDirectory: out.path, environment: fromFile)
        #expect(status.status == 1 && status.stderr.contains("no agent runs on \(mirror)"), "\(status.stderr)")

        let scrub = try await AgentProcess.run(["scrub", "-q"], outputDirectory: out.path, environment: fromFile)
        #expect(scrub.status == 0 && scrub.stdout.contains("scrubbed 4 files"), "\(scrub.stdout) \(scrub.stderr)")

        let fromEnvironment = fromFile.merging(["EMOJIART_SYNC_DIR": mirror]) { _, new in new }
        try FileManager.default.removeItem(atPath: xdg.file("emojiart-sync/config"))
        let purge = try await AgentProcess.run(["purge", "memory"], outputDirectory: out.path, environment: fromEnvironment)
        #expect(purge.status == 1 && purge.stderr.contains("no agent runs on \(mirror); nothing to purge"), "\(purge.stderr)")

        let nowhere = try await AgentProcess.run(["status"], outputDirectory: out.path, environment: fromFile)
        #expect(nowhere.status == 64 && nowhere.stderr.contains("EMOJIART_SYNC_DIR"), "\(nowhere.stderr)")
    }
}
