import Foundation
import TestSupport
import Testing

@testable import emojiart_sync

/// Durations are read as people write them (`5m`, `1h`, `90s`, as systemd and rclone read them), a plain number
/// in the setting's old unit still works, and a negative or malformed value gets the range message.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct DurationSettingTests {
    @Test func durationTextReadsUnitsAndPlainNumbers() {
        #expect(DurationText.seconds("90s", plainUnit: 1) == 90)
        #expect(DurationText.seconds("5m", plainUnit: 1) == 300)
        #expect(DurationText.seconds("1h", plainUnit: 1) == 3_600)
        #expect(DurationText.seconds("1h 30min", plainUnit: 1) == 5_400)
        #expect(DurationText.seconds("2h30m", plainUnit: 1) == 9_000)
        #expect(DurationText.seconds("1.5h", plainUnit: 1) == 5_400)
        #expect(DurationText.seconds("7d", plainUnit: 3_600) == 604_800)
        #expect(DurationText.seconds("45", plainUnit: 1) == 45)
        #expect(DurationText.seconds("24", plainUnit: 3_600) == 86_400)
        #expect(DurationText.seconds("-5", plainUnit: 1) == -5)
        #expect(DurationText.seconds("-5m", plainUnit: 1) == -300)
        for bad in ["", "m", "5x", "5 5", "1h5", "0.5s", "5m-", "--5", "1e3"] {
            #expect(DurationText.seconds(bad, plainUnit: 1) == nil, "\(bad)")
        }
        #expect(DurationText.format(86_400) == "1d")
        #expect(DurationText.format(5_400) == "1h30m")
        #expect(DurationText.format(0) == "0s")
    }

    /// Before: `--interval 5m` was `The value '5m' is invalid for '--interval <seconds>'` (exit 64).
    @Test func aRunTakesDurationsWithUnitsFromFlagsTheEnvironmentAndTheFile() async throws {
        let out = TemporaryDirectory("duration-out")
        let xdg = TemporaryDirectory("duration-xdg")
        try FileManager.default.createDirectory(atPath: xdg.file("emojiart-sync"), withIntermediateDirectories: true)
        try writeBytes(Array("scrub-interval = 7d\n".utf8), to: xdg.file("emojiart-sync/config"))
        let flag = try await AgentProcess.run(
            ["config", "--dir", "/tmp/x", "--interval", "5m"], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(flag.status == 0, "\(flag.stderr)")
        #expect(flag.stdout.contains("interval = 5m "), "\(flag.stdout)")
        #expect(flag.stdout.contains("scrub-interval = 7d "), "\(flag.stdout)")
        let environment = try await AgentProcess.run(
            ["config", "--dir", "/tmp/x"], outputDirectory: out.path,
            environment: ["XDG_CONFIG_HOME": xdg.path, "EMOJIART_SYNC_INTERVAL": "1h", "EMOJIART_SYNC_SCRUB_INTERVAL": "90m"])
        #expect(environment.status == 0, "\(environment.stderr)")
        let plain = try await AgentProcess.run(
            ["config", "--dir", "/tmp/x", "--interval", "90", "--scrub-interval", "12"], outputDirectory: out.path,
            environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(plain.status == 0, "plain seconds and hours still work: \(plain.stderr)")
    }

    /// Before: `--interval -5` said `Missing value for '--interval <seconds>'`.
    @Test func negativeAndMalformedValuesGetTheRangeMessage() async throws {
        let out = TemporaryDirectory("duration-bad-out")
        let xdg = TemporaryDirectory("duration-bad-xdg")
        let cases: [([String], [String: String], String)] = [
            (["--interval", "-5"], [:], "--interval must be 1s...1d, e.g. 90s, 5m, 1h30m, 2d; a plain number is seconds (--interval -5)"),
            (["--interval", "25h"], [:], "--interval must be 1s...1d"),
            (["--interval", "5 parsecs"], [:], "--interval must be"),
            ([], ["EMOJIART_SYNC_INTERVAL": "-1m"], "(EMOJIART_SYNC_INTERVAL=-1m)"),
            (["--scrub-interval", "-1"], [:], "--scrub-interval must be 0s...365d, e.g. 90s, 5m, 1h30m, 2d; a plain number is hours"),
            (["--max-delete", "-5"], [:], "--max-delete must be 0...100 (--max-delete -5)"),
            (["--concurrency", "-1"], [:], "--concurrency must be 1...256"),
        ]
        for (arguments, environment, message) in cases {
            let run = try await AgentProcess.run(
                ["--dir", "/tmp/x", "--once"] + arguments, outputDirectory: out.path,
                environment: environment.merging(["XDG_CONFIG_HOME": xdg.path]) { a, _ in a })
            #expect(run.status == 64, "\(arguments) \(environment): \(run.stderr)")
            #expect(run.stderr.contains(message), "\(arguments) \(environment): \(run.stderr)")
        }
        let purge = try await AgentProcess.run(
            ["purge", "memory", "--dir", "/tmp/x", "--timeout", "-1"], outputDirectory: out.path, environment: ["XDG_CONFIG_HOME": xdg.path])
        #expect(purge.status == 64 && purge.stderr.contains("--timeout must be 1s...1h"), "\(purge.stderr)")
    }
}
