import EmojiArtSync
import FoundationEssentials

/// What `emojiart-sync status --watch` shows, as text: the book's toolbar made a terminal screen (hits by
/// source with their rates, assets, repairs, the last poll and the next, the last few events, the keys), or
/// one line per interval when the output is not a terminal. Pure: it formats what it is given and does no
/// I/O, so it is tested without a terminal; `status --watch` reads the inputs and draws the lines.
public struct StatusScreen: Sendable {
    /// Everything one frame shows.
    public var status: AgentStatus?
    /// Whether an agent holds DIR's lock.
    public var agentRunning: Bool
    public var rates: HitRates.Rates
    /// The last noteworthy log lines, oldest first.
    public var events: [LogRecord]
    public var now: Date
    /// A question waiting for y/n (the disk purge), shown in place of the key help.
    public var prompt: String?
    /// What the last key did (`asked PID 42 to purge its memory cache (SIGUSR1)`).
    public var notice: String?

    public init(
        status: AgentStatus?, agentRunning: Bool, rates: HitRates.Rates, events: [LogRecord], now: Date,
        prompt: String? = nil, notice: String? = nil
    ) {
        self.status = status
        self.agentRunning = agentRunning
        self.rates = rates
        self.events = events
        self.now = now
        self.prompt = prompt
        self.notice = notice
    }

    /// The key help at the bottom of the screen.
    public static let keyHelp = "m purge memory   d purge disk   r re-read now   q quit"

    /// The screen, `width` columns by at most `height` rows: every line cut to the width, the events cut to
    /// what fits (at least the most recent one).
    public func lines(width: Int, height: Int) -> [String] {
        var top: [String] = []
        let clock = AgentStatus.clockTime(now)
        guard let status else {
            top.append("emojiart-sync status --watch" + "   " + clock)
            top.append(agentRunning ? "agent starting: no status published yet" : "no agent runs")
            return fit(top, bottom: [], width: width, height: height)
        }
        let agent = agentRunning ? "PID \(status.pid), up \(AgentStatus.duration(Int(now.timeIntervalSince(status.startedAt))))" : "PID \(status.pid), stopped"
        top.append("emojiart-sync  \(agent)  \(status.directory)   \(clock)")
        top.append("server \(status.server)   watching \(status.watching)   updated \(AgentStatus.duration(Int(now.timeIntervalSince(status.updatedAt)))) ago")
        top.append("")
        top.append("HITS         total      rate")
        for (name, total, rate) in [
            ("memory", status.hits.memory, rates.memory), ("disk", status.hits.disk, rates.disk),
            ("network", status.hits.network, rates.network),
        ] {
            top.append("  " + Self.pad(name, 8) + Self.padLeft("\(total)", 8) + Self.padLeft(Self.rate(rate), 10))
        }
        top.append("")
        let assets = status.assets
        top.append("ASSETS   \(assets.ok) ok   \(assets.missing) missing   \(assets.failing) failing   (\(assets.total) in the feed)")
        top.append("REPAIRS  \(status.repairs)   fetched \(ByteCount.format(status.bytesFetched))   memory cache \(ByteCount.format(status.memoryBytes))")
        top.append("POLL     " + pollText(status))
        if let purge = status.lastPurge {
            let what = purge.refused.map { "refused: \($0)" } ?? "\(purge.entries) entries, \(ByteCount.format(purge.bytes))"
            top.append("PURGE    \(purge.scope), \(what), \(AgentStatus.ago(purge.at, now: now))")
        }
        if let error = status.lastError {
            top.append("ERROR    \(error)")
        }
        top.append("")
        top.append("EVENTS")
        var bottom = [""]
        bottom.append(prompt ?? (Self.keyHelp + (notice.map { "   | \($0)" } ?? "")))
        let room = max(1, height - top.count - bottom.count)
        let shown = events.suffix(room)
        let eventLines = shown.isEmpty ? ["  (none in the log yet)"] : shown.map { "  " + Self.eventText($0) }
        return fit(top + eventLines, bottom: bottom, width: width, height: height)
    }

    /// One line for a log or a pipe, logfmt-like: `2026-11-25 14:03:07 pid=42 hits memory=54 (+2.0/s) ...`.
    public func line() -> String {
        let clock = AgentStatus.clockTime(now)
        guard let status else {
            return "\(clock) agent=\(agentRunning ? "starting" : "none")"
        }
        let assets = status.assets
        var parts = [
            clock, "pid=\(status.pid)", "agent=\(agentRunning ? "running" : "stopped")",
            "memory=\(status.hits.memory) (\(Self.rate(rates.memory)))",
            "disk=\(status.hits.disk) (\(Self.rate(rates.disk)))",
            "network=\(status.hits.network) (\(Self.rate(rates.network)))",
            "ok=\(assets.ok)", "missing=\(assets.missing)", "failing=\(assets.failing)", "total=\(assets.total)",
            "repairs=\(status.repairs)",
        ]
        if let next = status.nextPoll {
            parts.append("next_poll=" + (next > now ? "\(AgentStatus.duration(Int(next.timeIntervalSince(now).rounded(.up))))" : "due"))
        }
        return parts.joined(separator: " ")
    }

    /// `ok 12s ago (14:02:55); next in 48s (14:03:55)`.
    private func pollText(_ status: AgentStatus) -> String {
        var text = status.lastPoll.map { "last \($0.result) \(AgentStatus.ago($0.at, now: now))" } ?? "none yet"
        if let next = status.nextPoll {
            let seconds = next.timeIntervalSince(now)
            text += seconds > 0
                ? "   next in \(AgentStatus.duration(Int(seconds.rounded(.up)))) (\(AgentStatus.clockTime(next)))"
                : "   next due now"
        }
        return text
    }

    /// `14:02:55 repair   re-fetching damaged asset  key=/gallery/image?3 reason=missing`; warnings and worse
    /// say their level.
    static func eventText(_ record: LogRecord) -> String {
        var time = record.timestamp
        if let t = time.firstIndex(of: "T") {
            time = String(time[time.index(after: t)...].prefix(8))
        }
        let level = ["warning", "error", "critical"].contains(record.level) ? record.level.uppercased() + " " : ""
        let fields = record.fields.map { field in
            field.value.contains(" ") ? "\(field.key)=\"\(field.value)\"" : "\(field.key)=\(field.value)"
        }
        return ([time, pad(record.event, 8), level + record.message] + fields).joined(separator: " ")
    }

    /// `2.0/s`, `0/s`, `153/s`.
    static func rate(_ perSecond: Double) -> String {
        if perSecond <= 0 { return "0/s" }
        return PlainText.fixed(perSecond, digits: perSecond < 100 ? 1 : 0) + "/s"
    }

    private func fit(_ top: [String], bottom: [String], width: Int, height: Int) -> [String] {
        let room = max(0, height - bottom.count)
        return (Array(top.prefix(room)) + bottom).map { Self.cut($0, width) }
    }

    /// `text` cut to `width` characters (the last one an ellipsis when cut).
    static func cut(_ text: String, _ width: Int) -> String {
        guard width > 0 else { return "" }
        return text.count <= width ? text : String(text.prefix(width - 1)) + "…"
    }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }

    static func padLeft(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }
}
