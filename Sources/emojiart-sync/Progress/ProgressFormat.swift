import EmojiArtSync
import FoundationEssentials

/// The text of the terminal progress line and of the summary after a `--once` pass on a terminal.
/// Pure functions of their inputs, so the formatting is tested on real values without a terminal.
public enum ProgressFormat {
    /// `  42/120 assets  35%  1.3 MiB  640.0 KiB/s  ETA 5s`: done of total, bytes so far, byte rate, and the
    /// time left at the asset rate so far (`ETA --` until one asset is done), then `  3 failed` once any did.
    public static func line(_ progress: SyncProgress, elapsed: Duration) -> String {
        let seconds = max(elapsed.seconds, 0.001)
        let width = String(progress.total).count
        let done = String(repeating: " ", count: max(0, width - String(progress.done).count)) + String(progress.done)
        let percent = progress.total == 0 ? 100 : progress.done * 100 / progress.total
        let rate = ByteCount.format(Int(Double(progress.bytes) / seconds)) + "/s"
        let eta: String
        if progress.done >= progress.total {
            eta = "0s"
        } else if progress.done == 0 {
            eta = "--"
        } else {
            let remaining = Double(progress.total - progress.done) * seconds / Double(progress.done)
            eta = duration(remaining)
        }
        let failed = progress.failed > 0 ? "  \(progress.failed) failed" : ""
        return "\(done)/\(progress.total) assets  \(percent)%  \(ByteCount.format(progress.bytes))  \(rate)  ETA \(eta)\(failed)"
    }

    /// `synced 9 of 9 assets in 1.2s: 9 network, 0 disk, 0 memory; 1.1 MiB fetched, 2 repaired` plus
    /// `, 3 failed` when some could not be had.
    public static func summary(_ report: SyncReport) -> String {
        var text = "synced \(report.available) of \(report.uniqueAssets) assets in \(duration(report.duration.seconds)): "
        text += "\(report.hits[.network] ?? 0) network, \(report.hits[.disk] ?? 0) disk, \(report.hits[.memory] ?? 0) memory; "
        text += "\(ByteCount.format(report.bytesFetched)) fetched"
        if report.repairs > 0 { text += ", \(report.repairs) repaired" }
        let failed = report.failures.count + report.rejected.count
        if failed > 0 { text += ", \(failed) failed" }
        return text
    }

    /// `0.4s`, `12s`, `3m05s`, `1h02m`: short, for a line that is redrawn.
    public static func duration(_ seconds: Double) -> String {
        if seconds < 10 { return PlainText.fixed(max(0, seconds), digits: 1) + "s" }
        let whole = Int(seconds.rounded())
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return "\(whole / 60)m" + PlainText.zeroPadded(whole % 60, width: 2) + "s" }
        return "\(whole / 3600)h" + PlainText.zeroPadded(whole % 3600 / 60, width: 2) + "m"
    }
}
