import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Whether standard error is connected to the systemd journal, and how to talk to it there.
///
/// systemd sets `$JOURNAL_STREAM` to `DEVICE:INODE` of the stream it connected to stdout/stderr; the stream
/// is the journal's only if standard error is still that very file (the variable is inherited by children
/// whose stderr was redirected elsewhere). On the journal, each line starts with an sd-daemon priority
/// prefix (`<3>` error ... `<7>` debug) and carries no timestamp of its own: the journal stamps it.
enum JournalStream {
    /// True when `environment["JOURNAL_STREAM"]` names the device and inode of `descriptor` (stderr).
    static func isConnected(
        _ descriptor: Int32 = STDERR_FILENO, environment: [String: String]
    ) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// The sd-daemon prefix for a level: `<2>` critical, `<3>` error, `<4>` warning, `<5>` notice, `<6>` info,
    /// `<7>` debug and trace.
    static func priorityPrefix(for level: Logger.Level) -> String {
        switch level {
        case .critical: "<2>"
        case .error: "<3>"
        case .warning: "<4>"
        case .notice: "<5>"
        case .info: "<6>"
        case .debug, .trace: "<7>"
        }
    }
}
