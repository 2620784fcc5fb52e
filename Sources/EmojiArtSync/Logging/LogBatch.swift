/// Whole lines bound for the log, as bytes: the file's copy and standard error's (each line ending in a
/// newline; standard error's may be empty, or in the journal's form), and how many lines they are.
///
/// What a caller hands `LogWriter` under one lock (`AccessLineWriter` gathers a batch of access lines in one),
/// and what the writer holds until its thread writes it.
struct LogBatch: Sendable {
    var file: [UInt8] = []
    var standardError: [UInt8] = []
    /// Lines in the batch: what is counted when it is dropped.
    var lines = 0

    var byteCount: Int { file.count + standardError.count }

    /// Adds the lines of `other` after this batch's.
    mutating func append(_ other: LogBatch) {
        file.append(contentsOf: other.file)
        standardError.append(contentsOf: other.standardError)
        lines += other.lines
    }

    /// Adds one line, `line` for the file and `standardError` (nil: none) for stderr, each without its newline.
    mutating func append(line: String, standardError copy: String?) {
        file.append(contentsOf: line.utf8)
        file.append(0x0A)
        if let copy {
            standardError.append(contentsOf: copy.utf8)
            standardError.append(0x0A)
        }
        lines += 1
    }

    /// Empties the batch, keeping each buffer's memory while it is no larger than `keepingCapacityUpTo` bytes
    /// (a burst's large buffer is given back).
    mutating func removeAll(keepingCapacityUpTo limit: Int) {
        file.removeAll(keepingCapacity: file.capacity <= limit)
        standardError.removeAll(keepingCapacity: standardError.capacity <= limit)
        lines = 0
    }
}
