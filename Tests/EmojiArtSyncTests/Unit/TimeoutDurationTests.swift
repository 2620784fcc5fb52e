@testable import EmojiArtSync
import TestSupport
import Testing

@testable import emojiart_sync

/// `--connect-timeout` and `--stall-timeout` read durations as people write them, down to milliseconds, with the
/// reader every duration setting uses (`DurationText`).
struct TimeoutDurationTests {
    @Test(arguments: [
        ("10", Duration.seconds(10)), ("10s", .seconds(10)), ("500ms", .milliseconds(500)), ("1.5s", .milliseconds(1500)),
        ("2m", .seconds(120)), ("1h", .seconds(3600)), ("1m30s", .seconds(90)), (" 3s ", .seconds(3)),
    ])
    func accepted(text: String, expected: Duration) {
        #expect(DurationText.duration(text) == expected)
    }

    @Test(arguments: ["", "5x", "s", "1.2.3s", "inf", "nan", "5 s 3"])
    func refused(text: String) {
        #expect(DurationText.duration(text) == nil)
    }

    /// A negative one is read, so that its range check names what is wrong.
    @Test func aNegativeOneIsReadForTheRangeCheck() {
        #expect(DurationText.duration("-5s") == .seconds(-5))
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
