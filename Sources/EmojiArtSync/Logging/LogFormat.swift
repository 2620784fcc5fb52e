import FoundationEssentials
import Logging

/// How a log event becomes a line: logfmt (the default, for grep) or JSON (one object a line, for log
/// shippers). Both carry the same keys: `ts`, `level`, `msg`, `event`, then the event's metadata.
public enum LogFormat: String, Sendable, CaseIterable {
    case logfmt
    case json

    /// Formats one event in this format.
    public func line(timestamp: Date, level: Logger.Level, message: String, metadata: Logger.Metadata) -> String {
        switch self {
        case .logfmt:
            LogfmtFormatter.line(timestamp: timestamp, level: level, message: message, metadata: metadata)
        case .json:
            JSONLogFormatter.line(timestamp: timestamp, level: level, message: message, metadata: metadata)
        }
    }
}
