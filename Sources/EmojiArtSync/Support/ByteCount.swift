/// Parses sizes as people write them on a command line: `65536`, `512K`, `64M`, `64MiB`, `1G`.
/// Suffixes are binary (K = 1024); `B`, `iB` and case are accepted and ignored.
public enum ByteCount {
    public static func parse(_ text: String) -> Int? {
        var digits = String(PlainText.trimmed(text))
        var multiplier = 1
        let lowered = digits.lowercased()
        for suffix in ["ib", "b"] where lowered.hasSuffix(suffix) && lowered.count > suffix.count {
            digits.removeLast(suffix.count)
            break
        }
        switch digits.last?.lowercased() {
        case "k": multiplier = 1 << 10
        case "m": multiplier = 1 << 20
        case "g": multiplier = 1 << 30
        default: break
        }
        if multiplier != 1 { digits.removeLast() }
        guard let value = Int(digits), value >= 0 else { return nil }
        let (product, overflow) = value.multipliedReportingOverflow(by: multiplier)
        return overflow ? nil : product
    }

    /// `67108864` → `64.0 MiB`, `512` → `512 B`, for messages and `status`.
    public static func format(_ bytes: Int) -> String {
        let units = ["KiB", "MiB", "GiB", "TiB"]
        guard bytes >= 1024 else { return "\(bytes) B" }
        var value = Double(bytes) / 1024
        var unit = 0
        while value >= 1024 && unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return PlainText.fixed(value, digits: 1) + " " + units[unit]
    }
}
