import EmojiArtSync
import Configuration
import FoundationEssentials

/// The config file (`$XDG_CONFIG_HOME/emojiart-sync/config`) as a swift-configuration file snapshot, read
/// through its `FileProvider`: `key = value` lines, keys being the long options without `--` (`interval = 30`),
/// blank lines and `#` comments ignored (a whole line, or after a value: `concurrency = 8 # comment`), a value
/// optionally in double quotes. swift-configuration has no such
/// format (its `.env` reader matches only upper-case variable names), so the line splitting is here; the
/// layering, lookups and provenance are the library's. An unknown key or a line without `=` is an error with
/// its line number: a typo must not be silently ignored by a daemon.
struct SettingsFileSnapshot: FileConfigSnapshot {
    struct ParsingOptions: FileParsingOptions {
        static var `default`: ParsingOptions { ParsingOptions() }
    }

    /// A line the file format does not allow.
    struct LineError: Error, CustomStringConvertible {
        let line: Int
        let problem: String
        var description: String { "line \(line): \(problem)" }
    }

    let providerName: String
    let values: [String: String]

    init(data: RawSpan, providerName: String, parsingOptions: ParsingOptions) throws {
        self.providerName = providerName
        let text = data.withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
        var values: [String: String] = [:]
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = PlainText.trimmed(raw)
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let equals = line.firstIndex(of: "=") else {
                throw LineError(line: index + 1, problem: "expected key = value, found \"\(line)\"")
            }
            let key = String(PlainText.trimmed(line[..<equals]))
            let value: String
            do {
                value = try Self.value(line[line.index(after: equals)...])
            } catch {
                throw LineError(line: index + 1, problem: error.problem)
            }
            guard RunSetting(rawValue: key) != nil else {
                let known = RunSetting.allCases.map(\.rawValue).joined(separator: ", ")
                throw LineError(line: index + 1, problem: "unknown key \"\(key)\" (known: \(known))")
            }
            values[key] = value
        }
        self.values = values
    }

    /// The value after `=`: in double quotes (kept as written, `#` included), or bare up to a `#` that starts a
    /// comment (one at the start or after a space: `concurrency = 8 # more for the LAN`, while `dir = ~/a#b`
    /// keeps its `#`). A quote opened and not closed, or text after the closing quote, is an error.
    static func value(_ text: Substring) throws(LineError) -> String {
        let text = PlainText.trimmed(text)
        if text.hasPrefix("\"") {
            let rest = text.dropFirst()
            guard let close = rest.firstIndex(of: "\"") else {
                throw LineError(line: 0, problem: "a value opens a double quote and does not close it")
            }
            let after = PlainText.trimmed(rest[rest.index(after: close)...])
            guard after.isEmpty || after.hasPrefix("#") else {
                throw LineError(line: 0, problem: "text after the closing quote: \(after)")
            }
            return String(rest[..<close])
        }
        var previous: Character = " "
        for index in text.indices {
            if text[index] == "#", previous == " " || previous == "\t" {
                return String(PlainText.trimmed(text[..<index]))
            }
            previous = text[index]
        }
        return String(text)
    }

    func value(forKey key: AbsoluteConfigKey, type: ConfigType) throws -> LookupResult {
        let name = key.components.joined(separator: ".")
        guard let value = values[name] else { return LookupResult(encodedKey: name, value: nil) }
        guard type == .string else {
            throw LineError(line: 0, problem: "\(name) is read as text, not as \(type.rawValue)")
        }
        return LookupResult(encodedKey: name, value: ConfigValue(.string(value), isSecret: false))
    }

    var description: String { "\(providerName)[\(values.count) values]" }
    var debugDescription: String {
        "\(providerName)[" + values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ") + "]"
    }
}
