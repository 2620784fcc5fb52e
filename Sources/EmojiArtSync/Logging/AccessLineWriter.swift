import FoundationEssentials
import Logging

/// Writes the lines of asset accesses straight into bytes and hands them to the `LogSink` a batch at a time: no
/// `Logger.Metadata` dictionary, no `String` per field, a timestamp formatted once per millisecond. Two lines:
/// - the line of each access served, `event=asset hit=memory|disk|network`: the line `LogfmtLogHandler` writes
///   for `logger.info("asset", metadata: ["event": "asset", "key": ..., "hit": ..., "bytes": ..., "file": ...])`;
/// - the line of an access that failed, `event=asset result=failed`: the one it writes for
///   `logger.log(level: .warning or .debug, "asset unavailable", metadata: ["event": "asset", "key": ...,
///   "result": "failed", "error": ..., "remembered": "true" when it was])`. A pass over a gallery with 10,000
///   error items writes 10,000 of them.
///
/// Byte for byte the handler's line, in either `LogFormat`, on the file and on standard error alike. Under the
/// journal a line below warning stays in the log file (`LogSink.LineKind.access`), as the handler's would; a
/// warning goes to the journal too. Access lines are encoded only when the configured level lets info lines
/// through; a failure line's level is its caller's decision (`AccessLog` asks its logger).
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
    /// How a line below warning and a warning are copied to standard error (`LogSink.standardErrorForm(for:)`).
    private let accessForm: LogSink.StandardErrorForm
    private let eventForm: LogSink.StandardErrorForm
    /// The configured level lets info lines through.
    let isEnabled: Bool
    private var batch = LogBatch()
    private var timestamps = LogTimestampCache()
    /// What follows the timestamp in every access line up to its first own field (`level=info msg=asset event=asset`
    /// in logfmt), encoded once: one append a line instead of six.
    private let accessHead: [UInt8]
    /// The same for a failed access's line (`msg="asset unavailable"`), at each level.
    private let failureHeads: [Logger.Level: [UInt8]]

    /// A writer for `sink`, with the agent's configured `level` and `format` (those of its `Logger`).
    init(sink: LogSink, level: Logger.Level, format: LogFormat) {
        self.sink = sink
        self.format = format
        self.accessForm = sink.standardErrorForm(for: .access)
        self.eventForm = sink.standardErrorForm(for: .event)
        self.isEnabled = level <= .info
        var head = LogBatch()
        Self.putHead(level: .info, message: "asset", format: format, into: &head.file)
        accessHead = head.file
        var failureHeads: [Logger.Level: [UInt8]] = [:]
        for level in Logger.Level.allCases {
            var head: [UInt8] = []
            Self.putHead(level: level, message: "asset unavailable", format: format, into: &head)
            failureHeads[level] = head
        }
        self.failureHeads = failureHeads
    }

    /// Lines added and not yet appended.
    var pendingLines: Int { batch.lines }

    /// Encodes the access line of `key` (an `AssetKey`'s `rawValue`), served from `hit` (a `Hit`'s `rawValue`),
    /// `bytes` long, stored as `file`, into the pending batch, stamped `date`.
    mutating func add(key: String, hit: String, bytes: Int, file: String, at date: Date = Date()) {
        guard isEnabled else { return }
        var key = key, file = file
        key.withUTF8 { key in
            file.withUTF8 { file in add(key: key, hit: hit, bytes: bytes, file: file, logsAsIs: false, at: date) }
        }
    }

    /// Encodes the access line of `key`, served from `hit`: the key's url and file name are read in place, no
    /// `String` is made for either.
    mutating func add(_ key: AssetKey, hit: String, bytes: Int, at date: Date = Date()) {
        guard isEnabled else { return }
        let logsAsIs = key.logsAsIs
        key.withURL { url in
            key.withFileName { file in add(key: url, hit: hit, bytes: bytes, file: file, logsAsIs: logsAsIs, at: date) }
        }
    }

    /// The line, from the UTF-8 bytes of the key and the file name; `logsAsIs`: neither needs quotes in logfmt
    /// (known beforehand, `AssetKey.logsAsIs`), so neither is scanned for bytes that do.
    private mutating func add(
        key: UnsafeBufferPointer<UInt8>, hit: String, bytes: Int, file: UnsafeBufferPointer<UInt8>, logsAsIs: Bool,
        at date: Date
    ) {
        if format == .logfmt, logsAsIs {
            addLogfmtLine(key: key, hit: hit, bytes: bytes, file: file, at: date)
            return
        }
        let line = beginLine(head: accessHead, at: date)
        decimalField("bytes", bytes)
        field("file", file, asIs: logsAsIs)
        field("hit", hit)
        field("key", key, asIs: logsAsIs)
        endLine(line, level: .info)
    }

    /// The logfmt access line of a key and file name that need no quotes (every key of a book-shaped or hashed
    /// name): what follows the timestamp is written on the stack and appended at once, where a field at a time
    /// made about fifteen appends a line, 100,000 lines in a pass.
    private mutating func addLogfmtLine(
        key: UnsafeBufferPointer<UInt8>, hit: String, bytes: Int, file: UnsafeBufferPointer<UInt8>, at date: Date
    ) {
        let line = beginLine(head: [], at: date)
        var hit = hit
        hit.withUTF8 { hit in
            let capacity = accessHead.count + " bytes=".utf8.count + Self.decimalCapacity + " file=".utf8.count
                + file.count + " hit=".utf8.count + hit.count + " key=".utf8.count + key.count
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { buffer in
                var output = buffer.baseAddress!
                func put(_ bytes: UnsafeBufferPointer<UInt8>) {
                    guard let start = bytes.baseAddress, !bytes.isEmpty else { return }
                    output.update(from: start, count: bytes.count)
                    output += bytes.count
                }
                accessHead.withUnsafeBufferPointer { put($0) }
                put(Self.bytes(" bytes="))
                output += Self.writeDecimal(bytes, to: output)
                put(Self.bytes(" file="))
                put(file)
                put(Self.bytes(" hit="))
                put(hit)
                put(Self.bytes(" key="))
                put(key)
                batch.file.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress, count: output - buffer.baseAddress!))
            }
        }
        endLine(line, level: .info)
    }

    /// Encodes the line of an access of `key` (an `AssetKey`'s `rawValue`) that failed with `error` (its
    /// description), at `level`; `remembered`: a failure on record, refused again.
    mutating func addFailure(key: String, error: String, remembered: Bool, level: Logger.Level, at date: Date = Date()) {
        var key = key
        key.withUTF8 { addFailure(key: $0, error: error, remembered: remembered, level: level, at: date) }
    }

    /// `addFailure`, the key's url read in place.
    mutating func addFailure(_ key: AssetKey, error: String, remembered: Bool, level: Logger.Level, at date: Date = Date()) {
        key.withURL { addFailure(key: $0, error: error, remembered: remembered, level: level, at: date) }
    }

    private mutating func addFailure(
        key: UnsafeBufferPointer<UInt8>, error: String, remembered: Bool, level: Logger.Level, at date: Date
    ) {
        let line = beginLine(head: failureHeads[level] ?? [], at: date)
        field("error", error)
        field("key", key)
        if remembered { field("remembered", "true") }
        field("result", "failed")
        endLine(line, level: level)
    }

    /// Where a line begins in `batch.file`, and where the part the journal gets begins (logfmt: after `ts=...`).
    private struct LineStart {
        let line: Int
        let fields: Int
    }

    /// The timestamp, then `head` (what `putHead` encodes): the level, message and `event=asset` every line of an
    /// access begins with.
    private mutating func beginLine(head: [UInt8], at date: Date) -> LineStart {
        let lineStart = batch.file.count
        switch format {
        case .logfmt:
            put("ts=")
            timestamps.append(date, to: &batch.file)
            put(" ")
            let fieldsStart = batch.file.count
            batch.file.append(contentsOf: head)
            return LineStart(line: lineStart, fields: fieldsStart)
        case .json:
            put("{\"ts\":\"")
            timestamps.append(date, to: &batch.file)
            batch.file.append(contentsOf: head)
            return LineStart(line: lineStart, fields: lineStart)  // the journal gets the JSON line whole, its "ts" included
        }
    }

    /// The level, message and `event=asset`, as they follow the timestamp in `format`.
    private static func putHead(level: Logger.Level, message: StaticString, format: LogFormat, into output: inout [UInt8]) {
        func put(_ text: StaticString) { output.append(contentsOf: bytes(text)) }
        switch format {
        case .logfmt:
            put("level=")
            output.append(contentsOf: level.rawValue.utf8)
            put(" msg=")
            LogfmtFormatter.appendValue(bytes(message), to: &output)
            put(" event=asset")
        case .json:
            put("\",\"level\":\"")
            output.append(contentsOf: level.rawValue.utf8)
            put("\",\"msg\":")
            LogfmtFormatter.appendQuoted(bytes(message), to: &output, escapingLineSeparators: true)
            put(",\"event\":\"asset\"")
        }
    }

    /// One more field, ` name=value` or `,"name":"value"` (fields come in the order of their names). `asIs`: the
    /// value is known to need no quotes in logfmt.
    private mutating func field(_ name: StaticString, _ value: UnsafeBufferPointer<UInt8>, asIs: Bool = false) {
        switch format {
        case .logfmt:
            put(" ")
            put(name)
            put("=")
            if asIs {
                batch.file.append(contentsOf: value)
            } else {
                LogfmtFormatter.appendValue(value, to: &batch.file)
            }
        case .json:
            put(",\"")
            put(name)
            put("\":")
            LogfmtFormatter.appendQuoted(value, to: &batch.file, escapingLineSeparators: true)
        }
    }

    private mutating func field(_ name: StaticString, _ value: String) {
        var value = value
        value.withUTF8 { field(name, $0) }
    }

    private mutating func field(_ name: StaticString, _ value: StaticString) {
        field(name, Self.bytes(value))
    }

    /// A field whose value is `value` in decimal, as `Int.description` writes it (never quoted).
    private mutating func decimalField(_ name: StaticString, _ value: Int) {
        switch format {
        case .logfmt:
            put(" ")
            put(name)
            put("=")
            putDecimal(value)
        case .json:
            put(",\"")
            put(name)
            put("\":\"")
            putDecimal(value)
            put("\"")
        }
    }

    /// Ends the line begun at `start` and copies it to standard error in the form its level's kind takes.
    private mutating func endLine(_ start: LineStart, level: Logger.Level) {
        if format == .json { put("}") }
        batch.file.append(0x0A)
        switch level < .warning ? accessForm : eventForm {
        case .none:
            break
        case .same:
            batch.standardError.append(contentsOf: batch.file[start.line...])
        case .journal:
            batch.standardError.append(contentsOf: JournalStream.priorityPrefix(for: level).utf8)
            batch.standardError.append(contentsOf: batch.file[start.fields...])
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
        batch.file.append(contentsOf: Self.bytes(text))
    }

    private static func bytes(_ text: StaticString) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
    }

    /// `value` in decimal, as `Int.description` writes it.
    private mutating func putDecimal(_ value: Int) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.decimalCapacity) { buffer in
            let count = Self.writeDecimal(value, to: buffer.baseAddress!)
            batch.file.append(contentsOf: UnsafeBufferPointer(start: buffer.baseAddress, count: count))
        }
    }

    /// The most bytes `writeDecimal` writes: a sign and `Int.min`'s 19 digits.
    private static let decimalCapacity = 20

    /// Writes `value` in decimal, as `Int.description` writes it, at `output`; returns how many bytes it wrote.
    private static func writeDecimal(_ value: Int, to output: UnsafeMutablePointer<UInt8>) -> Int {
        var count = 0
        if value < 0 {
            output[0] = UInt8(ascii: "-")
            count = 1
        }
        var digits = InlineArray<20, UInt8>(repeating: 0)
        var rest = value.magnitude
        var length = 0
        repeat {
            digits[length] = 0x30 + UInt8(truncatingIfNeeded: rest % 10)
            rest /= 10
            length += 1
        } while rest > 0
        for at in stride(from: length - 1, through: 0, by: -1) {
            output[count] = digits[at]
            count += 1
        }
        return count
    }
}
