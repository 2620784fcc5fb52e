import FoundationEssentials
import Glibc

/// A log line's time as RFC 3339 UTC with milliseconds, `2026-11-22T03:04:05.123Z`: always 24 ASCII bytes,
/// built digit by digit (no `String(format:)` and its Foundation formatter: every log line has one).
struct LogTimestamp: Equatable {
    static let byteCount = 24

    /// Whole seconds since 1970 and the milliseconds past them: what the text shows, nothing finer.
    let seconds: Int
    let milliseconds: Int

    init(_ date: Date) {
        let since1970 = date.timeIntervalSince1970
        seconds = Int(since1970.rounded(.down))
        milliseconds = min(999, max(0, Int((since1970 - Double(seconds)) * 1000)))
    }

    /// Writes the 24 bytes to the start of `text`, which has room for them.
    func write(into text: UnsafeMutableBufferPointer<UInt8>) {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        var at = 0
        func put(_ byte: UInt8) {
            text[at] = byte
            at += 1
        }
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                put(0x30 + UInt8(truncatingIfNeeded: (rest / divisor) % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4); put(0x2D)  // -
        digits(Int(parts.tm_mon) + 1, 2); put(0x2D)
        digits(Int(parts.tm_mday), 2); put(0x54)  // T
        digits(Int(parts.tm_hour), 2); put(0x3A)  // :
        digits(Int(parts.tm_min), 2); put(0x3A)
        digits(Int(parts.tm_sec), 2); put(0x2E)  // .
        digits(milliseconds, 3); put(0x5A)  // Z
    }
}

/// The text of the last millisecond a line was stamped in: lines in the same millisecond (a batch of accesses
/// is thousands a second) reuse it instead of calling `gmtime_r` and formatting 24 digits again.
struct LogTimestampCache {
    private var last: LogTimestamp?
    private var text = [UInt8](repeating: 0, count: LogTimestamp.byteCount)

    /// Appends the timestamp of `date` to `line`.
    mutating func append(_ date: Date, to line: inout [UInt8]) {
        let stamp = LogTimestamp(date)
        if stamp != last {
            text.withUnsafeMutableBufferPointer { stamp.write(into: $0) }
            last = stamp
        }
        line.append(contentsOf: text)
    }
}
