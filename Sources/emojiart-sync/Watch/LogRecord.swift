import EmojiArtSync
import FoundationEssentials

/// One line of the agent's log, taken apart: time, level, event, message and the other fields in order.
/// Reads both formats the agent writes (`--log-format logfmt|json`, the same keys), for
/// `emojiart-sync status --watch`, which shows the last few events from the log file.
public struct LogRecord: Sendable, Equatable {
    /// `ts`, as written (`2026-11-25T02:29:34.597Z`).
    public var timestamp: String
    public var level: String
    public var event: String
    public var message: String
    /// The remaining `key=value` fields, in the line's order (JSON: sorted by key).
    public var fields: [Field]

    /// One `key=value` field.
    public struct Field: Sendable, Equatable {
        public var key: String
        public var value: String
        public init(key: String, value: String) {
            self.key = key
            self.value = value
        }
    }

    public init(timestamp: String, level: String, event: String, message: String, fields: [Field]) {
        self.timestamp = timestamp
        self.level = level
        self.event = event
        self.message = message
        self.fields = fields
    }

    /// Parses a logfmt or JSON line; nil for a line that is neither (a partial line cut by the tail read).
    public static func parse(_ line: some StringProtocol) -> LogRecord? {
        let trimmed = String(PlainText.trimmed(line))
        let pairs = trimmed.hasPrefix("{") ? jsonPairs(trimmed) : logfmtPairs(trimmed)
        guard let pairs, let timestamp = pairs.first(where: { $0.key == "ts" })?.value else { return nil }
        func take(_ key: String) -> String { pairs.first { $0.key == key }?.value ?? "" }
        return LogRecord(
            timestamp: timestamp, level: take("level"), event: take("event"), message: take("msg"),
            fields: pairs.filter { !["ts", "level", "event", "msg"].contains($0.key) })
    }

    /// Whether a person watching wants to see it: everything but the routine per-asset hit lines.
    public var isNoteworthy: Bool {
        !(event == "asset" && (level == "info" || level == "debug" || level == "trace"))
    }

    /// `key=value` pairs of a logfmt line (values may be double-quoted with backslash escapes); nil when the
    /// line has no pair at all.
    static func logfmtPairs(_ line: String) -> [Field]? {
        var fields: [Field] = []
        var index = line.startIndex
        while index < line.endIndex {
            while index < line.endIndex, line[index] == " " { index = line.index(after: index) }
            guard index < line.endIndex else { break }
            let keyStart = index
            while index < line.endIndex, line[index] != "=", line[index] != " " { index = line.index(after: index) }
            let key = String(line[keyStart..<index])
            guard index < line.endIndex, line[index] == "=" else { continue }
            index = line.index(after: index)
            var value = ""
            if index < line.endIndex, line[index] == "\"" {
                index = line.index(after: index)
                while index < line.endIndex, line[index] != "\"" {
                    if line[index] == "\\", line.index(after: index) < line.endIndex {
                        index = line.index(after: index)
                        switch line[index] {
                        case "n": value.append("\n")
                        case "t": value.append("\t")
                        default: value.append(line[index])
                        }
                    } else {
                        value.append(line[index])
                    }
                    index = line.index(after: index)
                }
                if index < line.endIndex { index = line.index(after: index) }
            } else {
                let valueStart = index
                while index < line.endIndex, line[index] != " " { index = line.index(after: index) }
                value = String(line[valueStart..<index])
            }
            fields.append(Field(key: key, value: value))
        }
        return fields.isEmpty ? nil : fields
    }

    /// The members of a JSON log line, sorted by key, values as text.
    static func jsonPairs(_ line: String) -> [Field]? {
        guard let object = try? JSONDecoder().decode([String: JSONScalar].self, from: Data(line.utf8)) else { return nil }
        return object.keys.sorted().map { key in Field(key: key, value: object[key]?.text ?? "") }
    }

    /// One member's value in a JSON log line: the writer puts only strings, numbers, booleans and null there.
    private enum JSONScalar: Decodable {
        case text(String)
        case integer(Int64)
        case number(Double)
        case boolean(Bool)
        case null

        init(from decoder: any Decoder) throws {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() {
                self = .null
            } else if let text = try? value.decode(String.self) {
                self = .text(text)
            } else if let boolean = try? value.decode(Bool.self) {
                self = .boolean(boolean)
            } else if let integer = try? value.decode(Int64.self) {
                self = .integer(integer)
            } else {
                self = .number(try value.decode(Double.self))
            }
        }

        /// The value as the logfmt line would show it.
        var text: String {
            switch self {
            case .text(let text): text
            case .integer(let integer): String(integer)
            case .number(let number): "\(number)"
            case .boolean(let boolean): boolean ? "true" : "false"
            case .null: ""
            }
        }
    }
}
