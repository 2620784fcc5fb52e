import Foundation

/// Parses the timeouts of a sync run (`--connect-timeout`, `--stall-timeout`) as people write durations on a command line, as systemd and rclone accept them: `90`
/// (seconds), `90s`, `500ms`, `1.5s`, `5m`, `1h`, `1m30s`, `1h2m3s`. Units: `ms`, `s`, `m`, `h`, `d`.
/// A negative or empty value, or an unknown unit, is nil.
public enum TimeoutDuration {
    public static func parse(_ text: String) -> Duration? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard !trimmed.isEmpty else { return nil }
        if let seconds = Double(trimmed) {
            return seconds >= 0 && seconds.isFinite ? .milliseconds(Int64((seconds * 1000).rounded())) : nil
        }
        var total: Duration = .zero
        var rest = Substring(trimmed)
        while !rest.isEmpty {
            let number = rest.prefix { $0.isNumber || $0 == "." }
            let afterNumber = rest.dropFirst(number.count)
            let unit = afterNumber.prefix { $0.isLetter }
            guard let value = Double(number), value >= 0, value.isFinite, let scale = Self.milliseconds(per: unit.lowercased()) else {
                return nil
            }
            total += .milliseconds(Int64((value * scale).rounded()))
            rest = afterNumber.dropFirst(unit.count)
        }
        return total
    }

    /// Milliseconds in one `unit`, or nil for an unknown unit.
    private static func milliseconds(per unit: String) -> Double? {
        switch unit {
        case "ms": 1
        case "s", "sec": 1000
        case "m", "min": 60_000
        case "h": 3_600_000
        case "d": 86_400_000
        default: nil
        }
    }
}
