import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// `--bwlimit`, `--max-retry-after` and `--http-version` come from the flag, the environment and the config file like every setting,
/// `config` shows where from, a bad value is a usage error naming the option, and the limit reaches the transfers.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ClientSettingTests {
    @Test func bothSettingsComeFromEachChannel() async throws {
        let out = TemporaryDirectory("client-settings-out")
        let xdg = TemporaryDirectory("client-settings-xdg")
        try FileManager.default.createDirectory(atPath: xdg.file("emojiart-sync"), withIntermediateDirectories: true)
        let defaults = try await AgentProcess.run(
            ["config", "--dir", "/tmp/x"], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(defaults.status == 0, "\(defaults.stderr)")
        #expect(defaults.stdout.contains("bwlimit = off "), "\(defaults.stdout)")
        #expect(defaults.stdout.contains("max-retry-after = 1h "), "\(defaults.stdout)")

        try writeBytes(Array("bwlimit = 10M\nmax-retry-after = 30m\n".utf8), to: xdg.file("emojiart-sync/config"))
        let file = try await AgentProcess.run(
            ["config", "--dir", "/tmp/x"], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(file.stdout.contains("bwlimit = 10M") && file.stdout.contains("# file"), "\(file.stdout)")
        #expect(file.stdout.contains("max-retry-after = 30m"), "\(file.stdout)")
        let environment = try await AgentProcess.run(
            ["config", "--dir", "/tmp/x"], outputDirectory: out.path,
            environment: ["XDG_CONFIG_HOME": xdg.path, "EMOJIART_SYNC_BWLIMIT": "512k", "EMOJIART_SYNC_MAX_RETRY_AFTER": "5m"])
        #expect(environment.stdout.contains("bwlimit = 512k") && environment.stdout.contains("environment EMOJIART_SYNC_BWLIMIT"), "\(environment.stdout)")
        #expect(environment.stdout.contains("max-retry-after = 5m"), "\(environment.stdout)")
        let flag = try await AgentProcess.run(
            ["config", "--dir", "/tmp/x", "--bwlimit", "1M", "--max-retry-after", "90s"], outputDirectory: out.path,
            environment: ["XDG_CONFIG_HOME": xdg.path, "EMOJIART_SYNC_BWLIMIT": "512k"])
        #expect(flag.status == 0, "\(flag.stderr)")
        #expect(flag.stdout.contains("bwlimit = 1M") && flag.stdout.contains("flag --bwlimit"), "\(flag.stdout)")
        #expect(flag.stdout.contains("max-retry-after = 90s"), "\(flag.stdout)")
    }

    @Test func badValuesAreUsageErrorsNamingTheOption() async throws {
        let out = TemporaryDirectory("client-settings-bad-out")
        let xdg = TemporaryDirectory("client-settings-bad-xdg")
        let cases: [([String], [String: String], String)] = [
            (["--bwlimit", "fast"], [:], #"--bwlimit: cannot read "fast" as a rate of at least 1k bytes per second, e.g. 512k, 10M, or off (--bwlimit fast)"#),
            (["--bwlimit", "100"], [:], "--bwlimit: cannot read \"100\""),
            (["--bwlimit", "-5k"], [:], "--bwlimit: cannot read \"-5k\""),
            ([], ["EMOJIART_SYNC_BWLIMIT": "10X"], "(EMOJIART_SYNC_BWLIMIT=10X)"),
            (["--max-retry-after", "2d"], [:], "--max-retry-after must be a duration of 0s...1d"),
            (["--http-version", "3"], [:], #"--http-version: unknown value "3", expected auto, 1.1, 2 (--http-version 3)"#),
            ([], ["EMOJIART_SYNC_HTTP_VERSION": "h2"], #"--http-version: unknown value "h2", expected auto, 1.1, 2 (EMOJIART_SYNC_HTTP_VERSION=h2)"#),
        ]
        for (arguments, environment, message) in cases {
            let run = try await AgentProcess.run(
                ["--dir", "/tmp/x", "--once"] + arguments, outputDirectory: out.path,
                environment: environment.merging(["XDG_CONFIG_HOME": xdg.path]) { a, _ in a })
            #expect(run.status == 64, "\(arguments) \(environment): \(run.stderr)")
            #expect(run.stderr.contains(message), "\(arguments) \(environment): \(run.stderr)")
        }
    }

    @Test func theHTTPVersionComesFromEachChannel() async throws {
        let out = TemporaryDirectory("http-version-out")
        let xdg = TemporaryDirectory("http-version-xdg")
        try FileManager.default.createDirectory(atPath: xdg.file("emojiart-sync"), withIntermediateDirectories: true)
        let defaults = try await AgentProcess.run(
            ["config", "--dir", "/tmp/x"], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(defaults.status == 0, "\(defaults.stderr)")
        #expect(defaults.stdout.contains("http-version = 1.1 "), "\(defaults.stdout)")

        try writeBytes(Array("http-version = 2\n".utf8), to: xdg.file("emojiart-sync/config"))
        let file = try await AgentProcess.run(
            ["config", "--dir", "/tmp/x"], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(file.stdout.contains("http-version = 2 ") && file.stdout.contains("# file"), "\(file.stdout)")
        let environment = try await AgentProcess.run(
            ["config", "--dir", "/tmp/x"], outputDirectory: out.path,
            environment: ["XDG_CONFIG_HOME": xdg.path, "EMOJIART_SYNC_HTTP_VERSION": "auto"])
        #expect(environment.stdout.contains("http-version = auto ") && environment.stdout.contains("environment EMOJIART_SYNC_HTTP_VERSION"), "\(environment.stdout)")
        let flag = try await AgentProcess.run(
            ["config", "--dir", "/tmp/x", "--http-version", "1.1"], outputDirectory: out.path,
            environment: ["XDG_CONFIG_HOME": xdg.path, "EMOJIART_SYNC_HTTP_VERSION": "auto"])
        #expect(flag.status == 0, "\(flag.stderr)")
        #expect(flag.stdout.contains("http-version = 1.1 ") && flag.stdout.contains("flag --http-version"), "\(flag.stdout)")
    }

    /// Each version against the bundled gallery, which speaks HTTP/1.1 only: `2` offers it an upgrade (`h2c`), which
    /// it ignores; every setting mirrors the whole gallery.
    @Test(arguments: ["auto", "1.1", "2"])
    func everyHTTPVersionMirrorsAnHTTP1Gallery(version: String) async throws {
        // Three small images: the protocol is what is tested, not the bodies (nine full-size ones took 3.5 s a case).
        let gallery = try await GalleryFixture(count: 3, imageSize: .small)
        let out = TemporaryDirectory("http-version-run-out")
        let dir = TemporaryDirectory("http-version-run")
        let run = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q", "--http-version", version],
            outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": out.path])
        #expect(run.status == ExitStatus.success.rawValue, "\(run.stderr)")
        #expect(gallery.validNumbers.allSatisfy { gallery.isMirrored($0, in: dir) })
        await gallery.stop()
    }

    /// Five full-size images, about 240 KB, at 100 KiB/s: at least 1.8 s (without the limit, well under 1 s).
    @Test func theLimitReachesTheTransfersOfARun() async throws {
        let gallery = try await GalleryFixture(count: 6)
        let out = TemporaryDirectory("bwlimit-out")
        let dir = TemporaryDirectory("bwlimit")
        let started = ContinuousClock.now
        let run = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path,
            environment: ["EMOJIART_SYNC_BWLIMIT": "100k", "XDG_CONFIG_HOME": out.path])
        let elapsed = ContinuousClock.now - started
        #expect(run.status == ExitStatus.success.rawValue, "\(run.stderr)")
        #expect(gallery.validNumbers.allSatisfy { gallery.isMirrored($0, in: dir) })
        #expect(elapsed >= .milliseconds(1_800), "\(elapsed)")
        await gallery.stop()
    }
}
