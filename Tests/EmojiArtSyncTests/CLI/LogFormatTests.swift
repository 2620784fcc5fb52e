@testable import EmojiArtSync
import Foundation
import Logging
import TestSupport
import Testing

/// `--log-format json` lines carry the same keys, in the same order, as the logfmt ones.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct LogFormatTests {
    /// The keys of a logfmt line, in order (values may be quoted and contain spaces).
    private func logfmtKeys(_ line: String) -> [String] {
        var keys: [String] = []
        var inQuotes = false
        var escaped = false
        var token = ""
        for character in line {
            if escaped { escaped = false; continue }
            if inQuotes {
                if character == "\\" { escaped = true } else if character == "\"" { inQuotes = false }
                continue
            }
            if character == "\"" { inQuotes = true } else if character == "=" { keys.append(token); token = "" }
            else if character == " " { token = "" } else { token.append(character) }
        }
        return keys
    }

    /// The keys of a JSON line, in order, after checking it is one JSON object of strings.
    private func jsonKeys(_ line: String) throws -> [String] {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String], "\(line)")
        let keys = try NSRegularExpression(pattern: #""([^"\\]*)":"#).matches(in: line, range: NSRange(line.startIndex..., in: line))
            .compactMap { match in Range(match.range(at: 1), in: line).map { String(line[$0]) } }
        #expect(Set(keys) == Set(object.keys))
        return keys
    }

    @Test func bothFormatsOfOneEventHaveTheSameKeysAndValues() throws {
        let metadata: Logger.Metadata = ["event": "asset", "hit": "network", "key": "/gallery/image?3", "note": "two words \"and\"\nnew line"]
        let date = Date(timeIntervalSince1970: 1_800_000_000.25)
        let logfmt = LogFormat.logfmt.line(timestamp: date, level: .info, message: "asset ready", metadata: metadata)
        let json = LogFormat.json.line(timestamp: date, level: .info, message: "asset ready", metadata: metadata)
        #expect(!json.contains("\n") && !logfmt.contains("\n"))
        #expect(logfmtKeys(logfmt) == ["ts", "level", "msg", "event", "hit", "key", "note"])
        #expect(try jsonKeys(json) == logfmtKeys(logfmt))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: String])
        #expect(object["note"] == "two words \"and\"\nnew line")
        #expect(object["key"] == "/gallery/image?3" && json.contains("/gallery/image?3"), "slashes are not escaped")
        #expect(object["ts"] == "2027-01-15T08:00:00.250Z")
    }

    @Test func aRunLogsTheSameEventsInEitherFormat() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let out = TemporaryDirectory("logformat-out")
        let logfmtDir = TemporaryDirectory("logformat-logfmt")
        let jsonDir = TemporaryDirectory("logformat-json")
        let plain = try await AgentProcess.run(["--dir", logfmtDir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path)
        let json = try await AgentProcess.run(["--dir", jsonDir.path, "--server", gallery.baseURL, "--once", "--log-format", "json"], outputDirectory: out.path)
        #expect(plain.status == 0 && json.status == 0, "\(json.stderr)")
        let plainLines = logLines(logfmtDir.path)
        let jsonLines = logLines(jsonDir.path)
        #expect(json.stderr.split(separator: "\n").map(String.init) == jsonLines, "stderr copies the JSON lines")
        #expect(plainLines.count == jsonLines.count)
        let plainKeys = plainLines.map { Set(logfmtKeys($0)) }
        let jsonKeySets = try jsonLines.map { Set(try jsonKeys($0)) }
        #expect(Set(plainKeys) == Set(jsonKeySets), "the same kinds of lines with the same keys")
        let objects = try jsonLines.map { try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String]) }
        #expect(objects.filter { $0["event"] == "asset" && $0["hit"] == "network" }.count == 5)
        await gallery.stop()
    }
}
