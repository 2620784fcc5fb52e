import EmojiArtGallery
import Foundation
import TestSupport
import Testing

/// `--log-file none|off|-`, `--log-max-size` and `--log-keep`, from the flag, the environment and the config
/// file, as `config` shows them and a run uses them.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct LogSettingsTests {
    @Test func rotationIsASettingWithItsDefaultsShownByConfig() async throws {
        let out = TemporaryDirectory("log-settings-out")
        let xdg = TemporaryDirectory("log-settings-xdg")
        try FileManager.default.createDirectory(atPath: xdg.file("emojiart-sync"), withIntermediateDirectories: true)
        try writeBytes(Array("log-keep = 9\n".utf8), to: xdg.file("emojiart-sync/config"))
        let shown = try await AgentProcess.run(
            ["config", "--dir", "/tmp/somewhere"], outputDirectory: out.path,
            environment: ["XDG_CONFIG_HOME": xdg.path, "EMOJIART_SYNC_LOG_MAX_SIZE": "32M"])
        #expect(shown.status == 0, "\(shown.stderr)")
        #expect(shown.stdout.contains("log-max-size = 32M"), "\(shown.stdout)")
        #expect(shown.stdout.contains("# environment EMOJIART_SYNC_LOG_MAX_SIZE"))
        #expect(shown.stdout.contains("log-keep = 9"))

        let tooSmall = try await AgentProcess.run(
            ["--dir", "/tmp/x", "--once", "--log-max-size", "1K"], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(tooSmall.status == 64 && tooSmall.stderr.contains("--log-max-size must be at least 64"), "\(tooSmall.stderr)")
        let badKeep = try await AgentProcess.run(
            ["--dir", "/tmp/x", "--once"], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path, "EMOJIART_SYNC_LOG_KEEP": "0"])
        #expect(badKeep.status == 64 && badKeep.stderr.contains("EMOJIART_SYNC_LOG_KEEP=0"), "\(badKeep.stderr)")
    }

    @Test func aDashIsRefusedAndNoneWritesNoFile() async throws {
        let out = TemporaryDirectory("log-none-out")
        let dir = TemporaryDirectory("log-none")
        let dash = try await AgentProcess.run(["--dir", dir.path, "--once", "--log-file", "-"], outputDirectory: out.path)
        #expect(dash.status == 64 && dash.stderr.contains("--log-file none"), "\(dash.stderr)")
        // The child runs in this process's directory: a file named - would be there (as the code before made it).
        let here = FileManager.default.currentDirectoryPath
        #expect(!FileManager.default.fileExists(atPath: here + "/-"))

        let gallery = try await GalleryFixture(count: 3, imageSize: .small)
        for off in ["none", "off"] {
            let run = try await AgentProcess.run(
                ["--dir", dir.path, "--once", "--server", gallery.baseURL, "--log-file", off], outputDirectory: out.path)
            #expect(run.status == 0, "\(run.stderr)")
            #expect(run.stderr.contains("event=pass"), "the lines still go to stderr")
            #expect(!dir.names(in: ".emojiart-sync").contains { $0.hasPrefix("sync.log") }, "\(dir.names(in: ".emojiart-sync"))")
            #expect(!FileManager.default.fileExists(atPath: here + "/" + off))
        }
        await gallery.stop()
    }
}
