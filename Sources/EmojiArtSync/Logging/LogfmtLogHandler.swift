import Foundation
import Logging

/// A swift-log handler that writes logfmt lines to a `LogSink`.
///
/// Value semantics as swift-log requires: level and metadata belong to this handler copy; the sink is shared.
public struct LogfmtLogHandler: LogHandler {
    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let sink: LogSink

    public init(sink: LogSink, level: Logger.Level = .info) {
        self.sink = sink
        self.logLevel = level
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() {
            merged.merge(provided) { _, new in new }
        }
        if let extra = event.metadata {
            merged.merge(extra) { _, new in new }
        }
        if let error = event.error {
            merged["error"] = .string(String(describing: error))
        }
        let fields = LogfmtFormatter.fields(level: event.level, message: event.message.description, metadata: merged)
        sink.write(
            line: LogfmtFormatter.line(timestamp: Date(), fields: fields),
            journalLine: { JournalStream.priorityPrefix(for: event.level) + fields })
    }
}
