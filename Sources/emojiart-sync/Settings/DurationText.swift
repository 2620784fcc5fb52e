import EmojiArtSync
import FoundationEssentials

/// Durations as people write them, the way systemd and rclone read them: `500ms`, `90s`, `5m`, `1h`, `2h30m`,
/// `1h 30min`, `1.5h`, `7d`; a plain number is in the setting's own unit (seconds for `--interval` and the
/// timeouts, hours for `--scrub-interval`, as before units were read). A leading `-` is kept, so a negative
/// value reaches the range check and its message instead of looking like an unknown option. The one reader of
/// durations for every setting.
enum DurationText {
    /// The units, longest spelling first within a letter so `min` is not read as `m` + `in`.
    private static let units: [(names: [String], seconds: Double)] = [
        (["milliseconds", "millisecond", "msecs", "msec", "ms"], 0.001),
        (["seconds", "second", "secs", "sec", "s"], 1),
        (["minutes", "minute", "mins", "min", "m"], 60),
        (["hours", "hour", "hrs", "hr", "h"], 3_600),
        (["days", "day", "d"], 86_400),
        (["weeks", "week", "w"], 604_800),
    ]

    /// Whole seconds `text` stands for, or nil when it is not a duration (or not whole seconds).
    /// `plainUnit`: the seconds one unit of a bare number is worth.
    static func seconds(_ text: String, plainUnit: Int) -> Int? {
        guard let total = totalSeconds(text, plainUnit: Double(plainUnit)), total == total.rounded() else { return nil }
        return Int(total)
    }

    /// The duration `text` stands for, to the millisecond (a bare number is seconds), or nil when it is not one.
    static func duration(_ text: String) -> Duration? {
        guard let total = totalSeconds(text, plainUnit: 1) else { return nil }
        return .milliseconds(Int64((total * 1000).rounded()))
    }

    /// Seconds, signed, as a `Double`; nil when `text` is not a duration.
    private static func totalSeconds(_ text: String, plainUnit: Double) -> Double? {
        var rest = PlainText.trimmed(text)
        let negative = rest.first == "-"
        if negative { rest = rest.dropFirst() }
        var total = 0.0
        var groups = 0
        while !rest.isEmpty {
            let number = rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") }
            guard !number.isEmpty, let value = Double(number) else { return nil }
            rest = rest.dropFirst(number.count).drop { $0 == " " }
            let word = rest.prefix { $0.isASCII && $0.isLetter }.lowercased()
            rest = rest.dropFirst(word.count).drop { $0 == " " }
            groups += 1
            if word.isEmpty {
                // A bare number: only on its own.
                guard groups == 1, rest.isEmpty else { return nil }
                total = value * plainUnit
            } else {
                guard let unit = units.first(where: { $0.names.contains(word) }) else { return nil }
                total += value * unit.seconds
            }
        }
        guard groups > 0, total < 1e12 else { return nil }
        return negative ? -total : total
    }

    /// What a duration setting accepts, for its error message: `must be 1s...1d, e.g. 90s, 5m, 1h30m, 2d; a
    /// plain number is seconds`.
    static func expected(_ range: ClosedRange<Int>, plainUnit: Int) -> String {
        "must be \(format(range.lowerBound))...\(format(range.upperBound)), e.g. 90s, 5m, 1h30m, 2d; "
            + "a plain number is \(plainUnit == 3_600 ? "hours" : "seconds")"
    }

    /// `seconds` the shortest way these units write it: 86400 -> `1d`, 5400 -> `1h30m`, 0 -> `0s`.
    static func format(_ seconds: Int) -> String {
        guard seconds != 0 else { return "0s" }
        var left = abs(seconds)
        var text = seconds < 0 ? "-" : ""
        for (name, size) in [("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)] where left >= size {
            text += "\(left / size)\(name)"
            left %= size
        }
        return text
    }
}
