import FoundationEssentials
import Logging

/// Writes the line of each asset access, `event=asset hit=memory|disk|network`, straight into bytes and hands
/// them to the `LogSink` a batch at a time: no `Logger.Metadata` dictionary, no `String` per field, a timestamp
/// formatted once per millisecond.
///
/// The text is the line `LogfmtLogHandler` writes for
/// `logger.info("asset", metadata: ["event": "asset", "key": ..., "hit": ..., "bytes": ..., "file": ...])`,
/// byte for byte, in either `LogFormat`, on the file and on standard error alike; under the journal an access
/// line stays in the log file (`LogSink.LineKind.access`). Nothing is encoded when the configured level is above
/// info.
///
/// A value owned by one caller (the silo's access log), mutated in place; its buffers are reused from batch to
/// batch. `add` encodes a line into the pending batch; `append()` hands the batch to the sink under one lock.
/// Lines keep their order with the sink's other lines when the owner appends its batch before it logs anything
/// else (a repair line, say) and before it suspends; `write` is `add` and `append()` for a line on its own.
/// Appending never waits: with the log writer stuck and its buffer full, the batch is dropped and its lines are
/// counted in the writer's next `event=log dropped=N` line.
struct AccessLineWriter: Sendable {
    private let sink: LogSink
    private let format: LogFormat
    /// How each line is copied to standard error (`LogSink.standardErrorForm(for: .access)`).
    private let standardError: LogSink.StandardErrorForm
    /// The configured level lets info lines through.
    let isEnabled: Bool
    private var batch = LogBatch()
    private var timestamps = LogTimestampCache()

    /// A writer for `sink`, with the agent's configured `level` and `format` (those of its `Logger`).
    init(sink: LogSink, level: Logger.Level, format: LogFormat) {
        self.sink = sink
        self.format = format
        self.standardError = sink.standardErrorForm(for: .access)
        self.isEnabled = level <= .info
    }

    /// Lines added and not yet appended.
    var pendingLines: Int { batch.lines }

    /// Encodes the access line of `key` (an `AssetKey`'s `rawValue`), served from `hit` (a `Hit`'s `rawValue`),
    /// `bytes` long, stored as `file`, into the pending batch, stamped `date`.
    mutating func add(key: String, hit: String, bytes: Int, file: String, at date: Date = Date()) {
        guard isEnabled else { return }
        var key = key, file = file
        key.withUTF8 { key in file.withUTF8 { file in add(key: key, hit: hit, bytes: bytes, file: file, at: date) } }
    }

    /// Encodes the access line of `key`, served from `hit`: the key's url and file name are read in place, no
    /// `String` is made for either.
    mutating func add(_ key: AssetKey, hit: String, bytes: Int, at date: Date = Date()) {
        guard isEnabled else { return }
        key.withURL { url in key.withFileName { file in add(key: url, hit: hit, bytes: bytes, file: file, at: date) } }
    }

    /// The line, from the UTF-8 bytes of the key and the file name.
    private mutating func add(
        key: UnsafeBufferPointer<UInt8>, hit: String, bytes: Int, file: UnsafeBufferPointer<UInt8>, at date: Date
    ) {
        let lineStart = batch.file.count
        let fieldsStart: Int
        switch format {
        case .logfmt:
            put("ts=")
            timestamps.append(date, to: &batch.file)
            put(" ")
            fieldsStart = batch.file.count
            put("level=info msg=asset event=asset bytes=")
            putDecimal(bytes)
            put(" file=")
            LogfmtFormatter.appendValue(file, to: &batch.file)
            put(" hit=")
            LogfmtFormatter.appendValue(hit, to: &batch.file)
            put(" key=")
            LogfmtFormatter.appendValue(key, to: &batch.file)
        case .json:
            fieldsStart = lineStart  // the journal gets the JSON line whole, its "ts" included
            put("{\"ts\":\"")
            timestamps.append(date, to: &batch.file)
            put("\",\"level\":\"info\",\"msg\":\"asset\",\"event\":\"asset\",\"bytes\":\"")
            putDecimal(bytes)
            put("\",\"file\":")
            LogfmtFormatter.appendQuoted(file, to: &batch.file, escapingLineSeparators: true)
            put(",\"hit\":")
            LogfmtFormatter.appendQuoted(hit, to: &batch.file, escapingLineSeparators: true)
            put(",\"key\":")
            LogfmtFormatter.appendQuoted(key, to: &batch.file, escapingLineSeparators: true)
            put("}")
        }
        batch.file.append(0x0A)
        switch standardError {
        case .none:
            break
        case .same:
            batch.standardError.append(contentsOf: batch.file[lineStart...])
        case .journal:
            batch.standardError.append(contentsOf: "<6>".utf8)  // JournalStream.priorityPrefix(for: .info)
            batch.standardError.append(contentsOf: batch.file[fieldsStart...])
        }
        batch.lines += 1
    }

    /// Hands the pending lines to the sink under one lock, without waiting; returns false when the sink's
    /// buffer was full and the batch was dropped (its lines counted in the writer's `dropped=N` line).
    @discardableResult
    mutating func append() -> Bool {
        guard batch.lines > 0 else { return true }
        let taken = sink.append(batch, whenFull: .drop)
        batch.removeAll(keepingCapacityUpTo: LogWriter.eagerBytes)
        return taken
    }

    /// Encodes one access line and appends it (with any lines still pending) at once.
    @discardableResult
    mutating func write(key: String, hit: String, bytes: Int, file: String) -> Bool {
        add(key: key, hit: hit, bytes: bytes, file: file)
        return append()
    }

    private mutating func put(_ text: StaticString) {
        batch.file.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// `value` in decimal, as `Int.description` writes it.
    private mutating func putDecimal(_ value: Int) {
        if value < 0 { batch.file.append(UInt8(ascii: "-")) }
        var digits = InlineArray<20, UInt8>(repeating: 0)  // Int.min has 19 digits
        var rest = value.magnitude
        var count = 0
        repeat {
            digits[count] = 0x30 + UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
            count += 1
        } while rest > 0
        for at in stride(from: count - 1, through: 0, by: -1) { batch.file.append(digits[at]) }
    }
}
