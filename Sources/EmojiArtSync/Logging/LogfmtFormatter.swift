import Foundation
import Logging

/// Renders a log event as one logfmt line: `ts=... level=info msg="..." key=value ...`.
///
/// logfmt is what people grep: every field is `key=value`, values with spaces, quotes, `=` or control
/// characters are double-quoted with backslash escapes, and one event is always exactly one line, so a
/// hostile string from the feed cannot forge a second log line.
public enum LogfmtFormatter {
    /// Formats one event. Metadata keys are sorted so lines are stable and diffable, except `event`,
    /// which comes first after `msg` because it is what a reader filters on.
    public static func line(
        timestamp: Date,
        level: Logger.Level,
        message: String,
        metadata: Logger.Metadata
    ) -> String {
        line(timestamp: timestamp, fields: fields(level: level, message: message, metadata: metadata))
    }

    /// Prefixes the `fields(...)` of an event with its timestamp: `ts=... level=...`.
    public static func line(timestamp: Date, fields: String) -> String {
        "ts=\(timestampString(timestamp)) " + fields
    }

    /// The line without its timestamp, `level=info msg="..." ...`: what the journal gets (it stamps lines).
    public static func fields(level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        orderedFields(level: level, message: message, metadata: metadata)
            .map { "\(sanitizeKey($0.key))=\(quote($0.value))" }
            .joined(separator: " ")
    }

    /// An event's keys and values in the order every log format writes them: `level`, `msg` (when not
    /// empty), `event`, then the rest of the metadata sorted by key. The JSON format uses the same order.
    public static func orderedFields(
        level: Logger.Level, message: String, metadata: Logger.Metadata
    ) -> [(key: String, value: String)] {
        var fields: [(key: String, value: String)] = [("level", level.rawValue)]
        if !message.isEmpty { fields.append(("msg", message)) }
        if let event = metadata["event"] { fields.append(("event", event.description)) }
        for key in metadata.keys.sorted() where key != "event" {
            fields.append((key, metadata[key]!.description))
        }
        return fields
    }

    /// Quotes a value when logfmt needs it; plain tokens stay bare so lines read naturally.
    public static func quote(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.unicodeScalars.contains { scalar in
            scalar == " " || scalar == "=" || scalar == "\"" || scalar == "\\" || scalar.value < 0x20 || scalar.value == 0x7F
        }
        guard needsQuotes else { return value }
        return quoted(value, escapingLineSeparators: false)
    }

    /// `value` in double quotes with `"`, `\`, CR, LF, tab and control characters escaped, so that one event is
    /// always one line; with `escapingLineSeparators`, U+2028 and U+2029 too (JSON readers in JavaScript need
    /// it). The one escaper of both log formats.
    static func quoted(_ value: String, escapingLineSeparators: Bool) -> String {
        var escaped = "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            case "\r": escaped += "\\r"
            case "\t": escaped += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F
                    || (escapingLineSeparators && (scalar.value == 0x2028 || scalar.value == 0x2029))
                {
                    escaped += String(format: "\\u%04x", scalar.value)
                } else {
                    escaped.unicodeScalars.append(scalar)
                }
            }
        }
        return escaped + "\""
    }

    private static func sanitizeKey(_ key: String) -> String {
        let cleaned = key.unicodeScalars.map { scalar -> Character in
            let ok = (scalar.value >= 0x30 && scalar.value <= 0x39) || (scalar.value >= 0x41 && scalar.value <= 0x5A)
                || (scalar.value >= 0x61 && scalar.value <= 0x7A) || scalar == "_" || scalar == "." || scalar == "-"
            return ok ? Character(scalar) : "_"
        }
        return cleaned.isEmpty ? "_" : String(cleaned)
    }

    /// RFC 3339 UTC with milliseconds, e.g. `2026-11-22T03:04:05.123Z`.
    static func timestampString(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        let millis = Int((date.timeIntervalSince1970 - Double(seconds)) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
            Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), millis
        )
    }
}
