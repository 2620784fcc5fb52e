import Logging

/// When an unchanged feed poll (a `304`) is worth a line at info: at most once an hour, so a quiet agent and a
/// dead one look different in the log, while the 1,440 unchanged polls a day of the default interval stay at debug.
struct PollHeartbeat: Sendable {
    static let period: Duration = .seconds(3600)

    private var lastInfo: ContinuousClock.Instant?
    /// Unchanged polls since the last info line, this one included.
    private(set) var unchangedPolls = 0

    /// Counts an unchanged poll; returns the level of its line: info for the first and then once a `period`.
    mutating func level(at now: ContinuousClock.Instant = .now) -> Logger.Level {
        unchangedPolls += 1
        if let lastInfo, lastInfo.duration(to: now) < Self.period { return .debug }
        lastInfo = now
        return .info
    }

    /// After an info line: the count starts again.
    mutating func reset() {
        unchangedPolls = 0
    }
}
