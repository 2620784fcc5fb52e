@testable import EmojiArtSync
import Foundation
import Testing

/// `status --json` keeps URLs and paths readable; plain `status` reads at a glance.
struct StatusFormatTests {
    private func sample() throws -> AgentStatus {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var status = AgentStatus(pid: 4242, startedAt: now.addingTimeInterval(-3725), directory: "/home/me/emoji", server: "http://127.0.0.1:8080")
        status.assets.total = 26
        status.assets.ok = 25
        status.assets.missing = 1
        status.hits.network = 26
        status.bytesFetched = 3 * 1024 * 1024 + 200 * 1024
        status.memoryBytes = 900 * 1024
        let poll = #"{"at": "2027-01-15T07:59:48Z", "result": "ok"}"#
        status.lastPoll = try AgentStatus.decoder.decode(AgentStatus.Poll.self, from: Data(poll.utf8))
        return status
    }

    @Test func jsonDoesNotEscapeSlashes() throws {
        let json = String(decoding: try AgentStatus.encoder.encode(try sample()), as: UTF8.self)
        #expect(json.contains("\"http://127.0.0.1:8080\"") && json.contains("\"/home/me/emoji\""), "\(json)")
        #expect(!json.contains("\\/"))
        #expect(try AgentStatus.decoder.decode(AgentStatus.self, from: Data(json.utf8)) == (try sample()))
    }

    /// The file keeps whole seconds: a poll planned 0.5 s ahead must not read as due once written and read back.
    @Test func aPollLessThanASecondAheadIsNotShownAsDue() throws {
        var status = try sample()
        let now = Date(timeIntervalSince1970: 1_800_000_000.2)
        status.nextPoll = now.addingTimeInterval(0.5)
        let read = try AgentStatus.decoder.decode(AgentStatus.self, from: AgentStatus.encoder.encode(status))
        let text = read.humanReadable(now: now)
        #expect(text.contains("in 1s"), "\(text)")
        #expect(!text.contains("due now"), "\(text)")
        status.nextPoll = now.addingTimeInterval(-0.5)
        let due = try AgentStatus.decoder.decode(AgentStatus.self, from: AgentStatus.encoder.encode(status))
        #expect(due.humanReadable(now: now).contains("due now"))
    }

    @Test func theSystemdStatusLineCountsAssetsOnceTheFeedIsKnown() throws {
        let status = try sample()
        #expect(status.systemdStatusLine.hasPrefix("25 ok, 1 missing, 0 failing of 26 assets; 0 repairs; last poll "))
        var starting = AgentStatus(pid: 4242, startedAt: Date(), directory: "/home/me/emoji", server: "http://127.0.0.1:8080")
        #expect(starting.systemdStatusLine == "reading the feed (first poll under way)", "no `0 ok ... of 0 assets` before a feed")
        starting.assets.total = 26
        starting.assets.missing = 26
        #expect(starting.systemdStatusLine == "0 ok, 26 missing, 0 failing of 26 assets; 0 repairs; first poll under way")
    }

    @Test func aStoppedAgentsLastStatusSaysWhenItStoppedAndHowLongItRan() throws {
        var status = try sample()
        status.state = "stopped"
        status.updatedAt = status.startedAt.addingTimeInterval(600)
        let text = status.humanReadable(now: status.updatedAt.addingTimeInterval(30))
        let agent = try #require(text.split(separator: "\n").first { $0.hasPrefix("agent:") })
        #expect(agent.contains("PID 4242, stopped 30s ago (") && agent.contains(") after running 10m0s (since "), "\(agent)")
    }

    @Test func plainStatusIsAlignedWithHumanSizesAndTimes() throws {
        let text = try sample().humanReadable(now: Date(timeIntervalSince1970: 1_800_000_000))
        let lines = text.split(separator: "\n").map(String.init)
        let valueColumns = Set(try lines.map { line in
            let colon = try #require(line.firstIndex(of: ":"), "every line is `label: value`: \(line)")
            return line[line.index(after: colon)...].prefix { $0 == " " }.count + line.distance(from: line.startIndex, to: colon)
        })
        #expect(valueColumns.count == 1, "values start in one column:\n\(text)")
        #expect(lines.contains { $0.hasPrefix("agent:") && $0.contains("PID 4242, running, up 1h2m") })
        #expect(lines.contains { $0.hasPrefix("fetched:") && $0.hasSuffix("3.2 MiB") })
        #expect(lines.contains { $0.hasPrefix("memory cache:") && $0.hasSuffix("900.0 KiB") })
        #expect(lines.contains { $0.hasPrefix("last poll:") && $0.contains("ok, 12s ago (") })
    }
}
