import EmojiArtSync
import TestSupport
import Testing

/// `--connect-timeout` and `--stall-timeout` read durations as people write them, down to milliseconds.
struct TimeoutDurationTests {
    @Test(arguments: [
        ("10", Duration.seconds(10)), ("10s", .seconds(10)), ("500ms", .milliseconds(500)), ("1.5s", .milliseconds(1500)),
        ("2m", .seconds(120)), ("1h", .seconds(3600)), ("1m30s", .seconds(90)), (" 3s ", .seconds(3)),
    ])
    func accepted(text: String, expected: Duration) {
        #expect(TimeoutDuration.parse(text) == expected)
    }

    @Test(arguments: ["", "-5", "-5s", "5x", "s", "1.2.3s", "inf", "nan"])
    func refused(text: String) {
        #expect(TimeoutDuration.parse(text) == nil)
    }

    @Test func aBadTimeoutIsAUsageErrorThatSaysWhereItCameFrom() async throws {
        let out = TemporaryDirectory("timeout-out")
        let run = try await AgentProcess.run(
            ["--dir", out.file("d"), "--once", "--stall-timeout", "0.5s"], outputDirectory: out.path,
            environment: ["XDG_CONFIG_HOME": out.path, "EMOJIART_SYNC_CONNECT_TIMEOUT": "-1"])
        #expect(run.status == 64)
        #expect(run.stderr.contains("--connect-timeout must be a duration of 100ms...10m, e.g. 10s, 1m30s (EMOJIART_SYNC_CONNECT_TIMEOUT=-1)"), "\(run.stderr)")
    }
}
