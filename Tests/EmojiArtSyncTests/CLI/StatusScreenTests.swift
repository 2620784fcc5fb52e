@testable import EmojiArtSync
@testable import emojiart_sync
import Foundation
import Testing

/// The watch screen as text: what it shows for a status, how it fits a terminal, the log lines it reads.
struct StatusScreenTests {
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    static func status() -> AgentStatus {
        var status = AgentStatus(pid: 42, startedAt: now.addingTimeInterval(-125), directory: "/home/u/emoji", server: "https://gallery.lan")
        status.updatedAt = now.addingTimeInterval(-1)
        status.hits.memory = 54
        status.hits.disk = 7
        status.hits.network = 28
        status.assets.total = 29
        status.assets.ok = 26
        status.assets.missing = 3
        status.assets.failing = 2
        status.repairs = 4
        status.nextPoll = now.addingTimeInterval(48)
        status.lastPoll = AgentStatus.Poll(at: now.addingTimeInterval(-12), result: "ok")
        return status
    }

    @Test func theScreenShowsHitsWithRatesAssetsRepairsPollsEventsAndKeys() throws {
        let event = try #require(LogRecord.parse(#"ts=2026-11-25T02:29:34.597Z level=info msg="re-fetching damaged asset" event=repair key=/gallery/image?3 reason=missing"#))
        let screen = StatusScreen(
            status: Self.status(), agentRunning: true, rates: .init(memory: 2, disk: 0, network: 0.25), events: [event], now: Self.now)
        let text = screen.lines(width: 100, height: 30).joined(separator: "\n")
        #expect(text.contains("PID 42, up 2m5s"))
        #expect(text.contains("  memory        54     2.0/s"), "\(text)")
        #expect(text.contains("  disk           7       0/s"))
        #expect(text.contains("  network       28     0.2/s"))
        #expect(text.contains("ASSETS   26 ok   3 missing   2 failing   (29 in the feed)"))
        #expect(text.contains("REPAIRS  4"))
        #expect(text.contains("next in 48s"))
        #expect(text.contains("02:29:34 repair   re-fetching damaged asset key=/gallery/image?3 reason=missing"))
        #expect(text.hasSuffix(StatusScreen.keyHelp))
    }

    @Test func theScreenFitsTheTerminalKeepingTheNewestEventsAndTheKeys() throws {
        let events = (0..<30).compactMap { LogRecord.parse("ts=2026-11-25T02:00:\(10 + $0).000Z level=info msg=poll event=poll n=\($0)") }
        let lines = StatusScreen(status: Self.status(), agentRunning: true, rates: .init(memory: 0, disk: 0, network: 0), events: events, now: Self.now)
            .lines(width: 40, height: 24)
        #expect(lines.count == 24)
        #expect(lines.allSatisfy { $0.count <= 40 })
        #expect(lines.contains { $0.contains("n=29") }, "the newest event is shown")
        #expect(!lines.contains { $0.contains("n=0") })
        #expect(lines.last == String(StatusScreen.keyHelp.prefix(39)) + "…")
    }

    @Test func aQuestionReplacesTheKeyHelp() {
        let lines = StatusScreen(status: Self.status(), agentRunning: true, rates: .init(memory: 0, disk: 0, network: 0), events: [], now: Self.now, prompt: "Purge the disk cache? y/N")
            .lines(width: 80, height: 30)
        #expect(lines.last == "Purge the disk cache? y/N")
    }

    @Test func oneLinePerIntervalForAPipe() {
        let line = StatusScreen(status: Self.status(), agentRunning: true, rates: .init(memory: 2, disk: 0, network: 0), events: [], now: Self.now).line()
        #expect(line.hasSuffix("pid=42 agent=running memory=54 (2.0/s) disk=7 (0/s) network=28 (0/s) ok=26 missing=3 failing=2 total=29 repairs=4 next_poll=48s"), "\(line)")
    }

    @Test func logLinesOfBothFormatsParseAndHitsAreNotNoteworthy() throws {
        let logfmt = try #require(LogRecord.parse(#"ts=2026-11-25T02:29:30.780Z level=info msg=asset event=asset bytes=51836 hit=memory key=/gallery/image?25"#))
        #expect(logfmt.event == "asset" && logfmt.fields.first == .init(key: "bytes", value: "51836"))
        #expect(!logfmt.isNoteworthy)
        let json = try #require(LogRecord.parse(#"{"ts":"2026-11-25T02:29:34.597Z","level":"notice","msg":"purged","event":"purge","entries":27}"#))
        #expect(json.event == "purge" && json.message == "purged" && json.fields == [.init(key: "entries", value: "27")])
        #expect(json.isNoteworthy)
        let quoted = try #require(LogRecord.parse(#"ts=x level=warning msg="a \"b\" c" event=asset error="x y""#))
        #expect(quoted.message == #"a "b" c"# && quoted.fields == [.init(key: "error", value: "x y")] && quoted.isNoteworthy)
        #expect(LogRecord.parse("partial line without pairs") == nil)
    }

    @Test func ratesFollowTheCountersOverTheWindowAndStartOverWhenTheyGoDown() {
        var rates = HitRates(window: 5)
        var hits = AgentStatus.Hits()
        rates.add(hits, at: Self.now)
        hits.memory = 10
        hits.network = 4
        rates.add(hits, at: Self.now.addingTimeInterval(2))
        #expect(rates.rates == .init(memory: 5, disk: 0, network: 2))
        rates.add(AgentStatus.Hits(), at: Self.now.addingTimeInterval(3))
        #expect(rates.rates == .init(memory: 0, disk: 0, network: 0), "a new agent's counters start at 0")
    }
}
