import FoundationEssentials
import Logging

/// A swift-log handler that writes one line per event to a `LogSink`: logfmt by default, JSON with
/// `format: .json` (`--log-format`).
///
/// Value semantics as swift-log requires: level and metadata belong to this handler copy; the sink is shared.
/// An `event=asset` line below warning is an access line (`LogSink.LineKind.access`): under the journal it
/// stays in the log file. `whenFull: .drop` makes a logger that never waits for a stuck log writer (the
/// `SyncActor` silo's); the default waits as `LogSink.WhenFull.wait` says.
struct LogfmtLogHandler: LogHandler {
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    private let sink: LogSink
    private let format: LogFormat
    private let whenFull: LogSink.WhenFull

    init(sink: LogSink, level: Logger.Level = .info, format: LogFormat = .logfmt, whenFull: LogSink.WhenFull = .wait) {
        self.sink = sink
        self.logLevel = level
        self.format = format
        self.whenFull = whenFull
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        // The common case, an event's own metadata and nothing to merge it with, costs no copy.
        var merged = metadata.isEmpty && metadataProvider == nil ? event.metadata ?? [:] : metadata
        if !metadata.isEmpty || metadataProvider != nil {
            if let provided = metadataProvider?.get() {
                merged.merge(provided) { _, new in new }
            }
            if let extra = event.metadata {
                merged.merge(extra) { _, new in new }
            }
        }
        if let error = event.error {
            merged["error"] = .string(String(describing: error))
        }
        let priority = JournalStream.priorityPrefix(for: event.level)
        let kind: LogSink.LineKind = event.level < .warning && merged["event"] == "asset" ? .access : .event
        switch format {
        case .logfmt:
            let fields = LogfmtFormatter.fields(level: event.level, message: event.message.description, metadata: merged)
            sink.write(
                line: LogfmtFormatter.line(timestamp: Date(), fields: fields), kind: kind, whenFull: whenFull,
                journalLine: { priority + fields })
        case .json:
            let line = format.line(timestamp: Date(), level: event.level, message: event.message.description, metadata: merged)
            sink.write(line: line, kind: kind, whenFull: whenFull, journalLine: { priority + line })
        }
    }
}

extension Logger {
    /// The agent's logger writing to `sink` at `level`, in `format`. `whenFull: .drop` for the `SyncActor` silo's
    /// parts: a stuck log writer then costs their lines (counted, and the count written once the writer moves),
    /// never a parked silo thread; the other callers wait as `LogSink.WhenFull.wait` says.
    static func writing(
        to sink: LogSink, level: Logger.Level, format: LogFormat, whenFull: LogSink.WhenFull = .wait
    ) -> Logger {
        var logger = Logger(label: "emojiart-sync") { _ in
            LogfmtLogHandler(sink: sink, level: level, format: format, whenFull: whenFull)
        }
        logger.logLevel = level
        return logger
    }
}
