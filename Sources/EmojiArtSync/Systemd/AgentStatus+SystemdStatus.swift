import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

extension AgentStatus {
    /// The one line `systemctl status` shows (`STATUS=`): assets ok, missing and failing, repairs, and the
    /// last feed poll (local time and result). Changes only when one of those does, not every second.
    /// Before the first feed has come, there is nothing to count yet: `reading the feed (first poll under way)`.
    var systemdStatusLine: String {
        if lastPoll == nil && assets.total == 0 { return "reading the feed (first poll under way)" }
        var line = "\(assets.ok) ok, \(assets.missing) missing, \(assets.failing) failing of \(assets.total) assets"
        line += "; \(repairs) repairs"
        if let lastPoll {
            var seconds = time_t(lastPoll.at.timeIntervalSince1970)
            var parts = tm()
            localtime_r(&seconds, &parts)
            let clock = [parts.tm_hour, parts.tm_min, parts.tm_sec].map { $0 < 10 ? "0\($0)" : "\($0)" }
            line += "; last poll \(clock.joined(separator: ":")) \(lastPoll.result)"
        } else {
            line += "; first poll under way"
        }
        return line
    }
}
