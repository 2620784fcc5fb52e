extension Duration {
    /// Seconds with one decimal, e.g. `4.2s`, for messages.
    var secondsText: String {
        PlainText.fixed(seconds, digits: 1) + "s"
    }

    /// Seconds as a floating-point number.
    public var seconds: Double {
        Double(components.seconds) + Double(components.attoseconds) / 1e18
    }

    /// Whole milliseconds, for `ms=` log fields.
    public var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
