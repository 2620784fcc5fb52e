import Foundation
import TestSupport
import Testing

/// Settings come from the flag, then the environment, then the config file, then the default, and
/// `emojiart-sync config` says which.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SettingsTests {
    /// `config`'s line for one setting: `key = value  # source`.
    private func line(_ key: String, in output: String) -> String? {
        output.split(separator: "\n").map(String.init).first { $0.hasPrefix(key + " = ") }
    }

    @Test func flagBeatsEnvironmentBeatsFileBeatsDefault() async throws {
        let out = TemporaryDirectory("settings-out")
        let xdg = TemporaryDirectory("settings-xdg")
        try FileManager.default.createDirectory(atPath: xdg.file("emojiart-sync"), withIntermediateDirectories: true)
        try writeBytes(Array("""
            # mine
            interval = 30
            concurrency = 3
            log-level = "debug"
            server = http://127.0.0.1:9

            """.utf8), to: xdg.file("emojiart-sync/config"))
        let environment = ["XDG_CONFIG_HOME": xdg.path, "EMOJIART_SYNC_CONCURRENCY": "5", "EMOJIART_SYNC_MAX_DELETE": "80"]
        let run = try await AgentProcess.run(
            ["config", "--dir", "/tmp/somewhere", "--log-level", "warning"], outputDirectory: out.path, environment: environment)
        #expect(run.status == 0, "\(run.stderr)")
        let file = xdg.file("emojiart-sync/config")
        #expect(line("dir", in: run.stdout)?.hasSuffix("# flag --dir") == true, "\(run.stdout)")
        #expect(line("log-level", in: run.stdout)?.contains("warning") == true)
        #expect(line("log-level", in: run.stdout)?.hasSuffix("# flag --log-level") == true)
        #expect(line("concurrency", in: run.stdout)?.contains("= 5 ") == true)
        #expect(line("concurrency", in: run.stdout)?.hasSuffix("# environment EMOJIART_SYNC_CONCURRENCY") == true)
        #expect(line("max-delete", in: run.stdout)?.hasSuffix("# environment EMOJIART_SYNC_MAX_DELETE") == true)
        #expect(line("interval", in: run.stdout)?.contains("= 30 ") == true)
        #expect(line("interval", in: run.stdout)?.hasSuffix("# file \(file)") == true, "\(run.stdout)")
        #expect(line("server", in: run.stdout)?.hasSuffix("# file \(file)") == true)
        #expect(line("retries", in: run.stdout)?.hasSuffix("# default") == true)
    }

    @Test func aRunUsesTheFileAndTheEnvironment() async throws {
        let gallery = try await GalleryFixture(count: 4)
        let out = TemporaryDirectory("settings-run-out")
        let xdg = TemporaryDirectory("settings-run-xdg")
        let dir = TemporaryDirectory("settings-run")
        try FileManager.default.createDirectory(atPath: xdg.file("emojiart-sync"), withIntermediateDirectories: true)
        try writeBytes(Array("server = \(gallery.baseURL)\nquiet = yes\n".utf8), to: xdg.file("emojiart-sync/config"))
        let run = try await AgentProcess.run(
            ["--once"], outputDirectory: out.path,
            environment: ["XDG_CONFIG_HOME": xdg.path, "EMOJIART_SYNC_DIR": dir.path, "EMOJIART_SYNC_LOG_FORMAT": "json"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.isEmpty, "quiet = yes from the file: \(run.stderr)")
        #expect(FileManager.default.fileExists(atPath: dir.file("gallery_image_4.png")))
        #expect(logLines(dir.path).allSatisfy { $0.hasPrefix("{\"ts\":") }, "log-format from the environment")
        await gallery.stop()
    }

    @Test func badValuesAreUsageErrorsThatSayWhereTheyCameFrom() async throws {
        let out = TemporaryDirectory("settings-bad-out")
        let xdg = TemporaryDirectory("settings-bad-xdg")
        let environment = ["XDG_CONFIG_HOME": xdg.path, "EMOJIART_SYNC_INTERVAL": "0"]
        let badEnvironment = try await AgentProcess.run(["--dir", "/tmp/x", "--once"], outputDirectory: out.path, environment: environment)
        #expect(badEnvironment.status == 64)
        #expect(badEnvironment.stderr.contains("EMOJIART_SYNC_INTERVAL=0"), "\(badEnvironment.stderr)")

        try FileManager.default.createDirectory(atPath: xdg.file("emojiart-sync"), withIntermediateDirectories: true)
        try writeBytes(Array("interval = 10\nintervall = 20\n".utf8), to: xdg.file("emojiart-sync/config"))
        let typo = try await AgentProcess.run(["config", "--dir", "/tmp/x"], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(typo.status == 64)
        #expect(typo.stderr.contains("line 2") && typo.stderr.contains("intervall"), "\(typo.stderr)")

        let noDirectory = try await AgentProcess.run(["--once"], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path + "/none"])
        #expect(noDirectory.status == 64 && noDirectory.stderr.contains("EMOJIART_SYNC_DIR"), "\(noDirectory.stderr)")
    }
}
