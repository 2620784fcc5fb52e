/// The few number and text layouts the agent prints (`12.3 MiB`, `0.4s`, `2026-11-22 14:03:07`, aligned
/// columns), made from the bytes instead of `String(format:)`, `padding(toLength:)` and
/// `trimmingCharacters(in:)`: those live in full Foundation, whose ICU data would double the binary's size, and
/// the agent needs none of the locale handling they bring. Output is the "C" locale's, as printf's would be.
public enum PlainText {
    /// `value` with exactly `digits` digits after the point, as `%.Nf` prints it for the values the agent shows
    /// (sizes, rates, seconds): halves to even as glibc does (`fixed(0.25, 1)` is `"0.2"`, `fixed(7, 0)` `"7"`).
    /// It may differ from printf in the last digit where scaling made a value a half that was not one in binary,
    /// and it never prints `-0`.
    /// Not a number or infinite prints as printf does (`nan`, `inf`, `-inf`).
    public static func fixed(_ value: Double, digits: Int) -> String {
        guard value.isFinite else { return value.isNaN ? "nan" : (value < 0 ? "-inf" : "inf") }
        var scale: Double = 1
        for _ in 0..<max(0, digits) { scale *= 10 }
        let scaled = (abs(value) * scale).rounded(.toNearestOrEven)
        // Beyond what a UInt64 holds (no size or rate the agent shows) Swift's own description will do.
        guard scaled < 1.8e19 else { return "\(value.rounded())" }
        let units = UInt64(scaled)
        let whole = units / UInt64(scale)
        let sign = value < 0 && units > 0 ? "-" : ""
        guard digits > 0 else { return sign + String(whole) }
        let fraction = units % UInt64(scale)
        return sign + String(whole) + "." + zeroPadded(fraction, width: digits)
    }

    /// `value` in decimal with leading zeros up to `width` digits (`%0Nd`): `zeroPadded(7, width: 2)` is `"07"`, and the
    /// sign counts in the width as printf's does.
    public static func zeroPadded<Value: BinaryInteger>(_ value: Value, width: Int) -> String {
        let digits = String(value.magnitude)
        let sign = value < 0 ? "-" : ""
        return sign + String(repeating: "0", count: max(0, width - sign.count - digits.count)) + digits
    }

    /// `text` followed by spaces up to `width` characters (left-aligned, `%-Ns`); a longer text is kept whole.
    public static func padded(_ text: String, to width: Int) -> String {
        text + String(repeating: " ", count: max(0, width - text.count))
    }

    /// `text` without leading and trailing spaces, tabs, carriage returns and newlines.
    public static func trimmed<Text: StringProtocol>(_ text: Text) -> Substring {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        let body = text[...]
        guard let first = body.firstIndex(where: { !isBlank($0) }), let last = body.lastIndex(where: { !isBlank($0) })
        else { return Substring() }
        return Substring(body[first...last])
    }
}
