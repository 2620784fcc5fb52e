import FoundationEssentials
import Logging

/// Renders a log event as one JSON object on one line, with the keys and key order of `LogfmtFormatter`:
/// `{"ts":"...","level":"info","msg":"...","event":"...",<metadata sorted by key>}`. Every value is a
/// string, as in logfmt, so a reader can switch formats without changing a query.
enum JSONLogFormatter {
    static func line(
        timestamp: Date,
        level: Logger.Level,
        message: String,
        metadata: Logger.Metadata
    ) -> String {
        let fields = [("ts", LogfmtFormatter.timestampString(timestamp))]
            + LogfmtFormatter.orderedFields(level: level, message: message, metadata: metadata).map { ($0.key, $0.value) }
        return "{" + fields.map { "\(quote($0.0)):\(quote($0.1))" }.joined(separator: ",") + "}"
    }

    /// A JSON string literal. Control characters are escaped, so one event is always one line; `/` is not.
    static func quote(_ value: String) -> String {
        LogfmtFormatter.quoted(value, escapingLineSeparators: true)
    }
}
