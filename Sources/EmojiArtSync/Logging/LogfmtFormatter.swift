import FoundationEssentials
import Glibc
import Logging

/// Renders a log event as one logfmt line: `ts=... level=info msg="..." key=value ...`.
///
/// logfmt is what people grep: every field is `key=value`, values with spaces, quotes, `=` or control
/// characters are double-quoted with backslash escapes, and one event is always exactly one line, so a
/// hostile string from the feed cannot forge a second log line.
enum LogfmtFormatter {
    /// Formats one event. Metadata keys are sorted so lines are stable and diffable, except `event`,
    /// which comes first after `msg` because it is what a reader filters on.
    static func line(
        timestamp: Date,
        level: Logger.Level,
        message: String,
        metadata: Logger.Metadata
    ) -> String {
        line(timestamp: timestamp, fields: fields(level: level, message: message, metadata: metadata))
    }

    /// Prefixes the `fields(...)` of an event with its timestamp: `ts=... level=...`.
    static func line(timestamp: Date, fields: String) -> String {
        var line = "ts="
        line.reserveCapacity(28 + fields.utf8.count)
        line += timestampString(timestamp)
        line += " "
        line += fields
        return line
    }

    /// The line without its timestamp, `level=info msg="..." ...`: what the journal gets (it stamps lines).
    /// Written into one buffer in the order of `orderedFields` (every access writes one of these lines, so no
    /// array of rendered fields and no join on the way).
    static func fields(level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        var line = LineBuilder()
        line.put("level=")
        line.put(level.rawValue)
        if !message.isEmpty { line.field("msg", message) }
        if let event = metadata["event"] { line.field("event", event.description) }
        for position in sortedByKey(metadata) where metadata.keys[position] != "event" {
            line.field(metadata.keys[position], metadata.values[position].description)
        }
        return String(decoding: line.bytes, as: UTF8.self)
    }

    /// The bytes of one line as `fields(...)` writes it.
    private struct LineBuilder {
        var bytes: [UInt8] = []

        init() { bytes.reserveCapacity(256) }

        mutating func put(_ text: String) {
            var text = text
            text.withUTF8 { bytes.append(contentsOf: $0) }
        }

        mutating func field(_ key: String, _ value: String) {
            bytes.append(UInt8(ascii: " "))
            put(sanitizeKey(key))
            bytes.append(UInt8(ascii: "="))
            appendValue(value, to: &bytes)
        }
    }

    /// The positions of `metadata`'s entries in the order of their keys: an insertion sort of positions (an
    /// event has a handful of keys; sorting the key-value pairs themselves cost most of a line's formatting).
    static func sortedByKey(_ metadata: Logger.Metadata) -> [Logger.Metadata.Index] {
        var order = Array(metadata.indices)
        for next in order.indices.dropFirst() {
            var at = next
            while at > 0, metadata.keys[order[at]] < metadata.keys[order[at - 1]] {
                order.swapAt(at, at - 1)
                at -= 1
            }
        }
        return order
    }

    /// An event's keys and values in the order every log format writes them: `level`, `msg` (when not
    /// empty), `event`, then the rest of the metadata sorted by key. The JSON format uses the same order.
    static func orderedFields(
        level: Logger.Level, message: String, metadata: Logger.Metadata
    ) -> [(key: String, value: String)] {
        var fields: [(key: String, value: String)] = [("level", level.rawValue)]
        if !message.isEmpty { fields.append(("msg", message)) }
        if let event = metadata["event"] { fields.append(("event", event.description)) }
        for position in sortedByKey(metadata) where metadata[position].key != "event" {
            fields.append((metadata[position].key, metadata[position].value.description))
        }
        return fields
    }

    /// Quotes a value when logfmt needs it; plain tokens stay bare so lines read naturally.
    static func quote(_ value: String) -> String {
        var bytes: [UInt8] = []
        appendValue(value, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `value` as a logfmt value: bare when it is a plain token, else `quoted`.
    static func appendValue(_ value: String, to line: inout [UInt8]) {
        var value = value
        value.withUTF8 { appendValue($0, to: &line) }  // a walk of contiguous bytes, not of the UTF-8 view
    }

    /// `appendValue` of a value's UTF-8 bytes (valid UTF-8).
    static func appendValue(_ bytes: UnsafeBufferPointer<UInt8>, to line: inout [UInt8]) {
        if needsQuotes(bytes) {
            appendQuoted(bytes, to: &line, escapingLineSeparators: false)
        } else {
            line.append(contentsOf: bytes)
        }
    }

    /// Every byte that needs quoting is ASCII, so a walk of the UTF-8 bytes decides.
    static func needsQuotes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if bytes.isEmpty { return true }
        for byte in bytes where byte <= 0x20 || byte == 0x3D || byte == 0x22 || byte == 0x5C || byte == 0x7F {
            return true
        }
        return false
    }

    /// `value` in double quotes with `"`, `\`, CR, LF, tab and control characters escaped, so that one event is
    /// always one line; with `escapingLineSeparators`, U+2028 and U+2029 too (JSON readers in JavaScript need
    /// it). The one escaper of both log formats.
    static func quoted(_ value: String, escapingLineSeparators: Bool) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(value.utf8.count + 16)
        appendQuoted(value, to: &bytes, escapingLineSeparators: escapingLineSeparators)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `quoted(value, ...)` to `line`.
    static func appendQuoted(_ value: String, to line: inout [UInt8], escapingLineSeparators: Bool) {
        var value = value
        value.withUTF8 { appendQuoted($0, to: &line, escapingLineSeparators: escapingLineSeparators) }
    }

    /// Appends the UTF-8 `bytes` (valid UTF-8: a String's own, or an `AssetKey`'s) quoted and escaped as
    /// `quoted(...)` says.
    static func appendQuoted(
        _ bytes: UnsafeBufferPointer<UInt8>, to escaped: inout [UInt8], escapingLineSeparators: Bool
    ) {
        escaped.append(UInt8(ascii: "\""))
        func escape(_ text: StaticString) {
            escaped.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
        }
        let hex: StaticString = "0123456789abcdef"
        var at = 0
        while at < bytes.count {
            let byte = bytes[at]
            switch byte {
            case UInt8(ascii: "\""): escape("\\\"")
            case UInt8(ascii: "\\"): escape("\\\\")
            case 0x0A: escape("\\n")
            case 0x0D: escape("\\r")
            case 0x09: escape("\\t")
            case 0..<0x20, 0x7F:
                escape("\\u00")
                escaped.append(hex.utf8Start[Int(byte >> 4)])
                escaped.append(hex.utf8Start[Int(byte & 0xF)])
            case 0xE2 where escapingLineSeparators && at + 2 < bytes.count && bytes[at + 1] == 0x80
                && (bytes[at + 2] == 0xA8 || bytes[at + 2] == 0xA9):
                escape(bytes[at + 2] == 0xA8 ? "\\u2028" : "\\u2029")  // U+2028, U+2029
                at += 2
            default:
                escaped.append(byte)  // a byte of valid UTF-8, copied as it is
            }
            at += 1
        }
        escaped.append(UInt8(ascii: "\""))
    }

    private static func sanitizeKey(_ key: String) -> String {
        var bytes = key
        if bytes.withUTF8({ !$0.isEmpty && $0.allSatisfy(isKeyByte) }) { return key }  // every key the agent writes
        let cleaned = key.unicodeScalars.map { scalar -> Character in
            scalar.isASCII && isKeyByte(UInt8(scalar.value)) ? Character(scalar) : "_"
        }
        return cleaned.isEmpty ? "_" : String(cleaned)
    }

    private static func isKeyByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == 0x5F || byte == 0x2E || byte == 0x2D
    }

    /// RFC 3339 UTC with milliseconds, e.g. `2026-11-22T03:04:05.123Z` (see `LogTimestamp`).
    static func timestampString(_ date: Date) -> String {
        String(unsafeUninitializedCapacity: LogTimestamp.byteCount) { text in
            LogTimestamp(date).write(into: text)
            return LogTimestamp.byteCount
        }
    }
}
