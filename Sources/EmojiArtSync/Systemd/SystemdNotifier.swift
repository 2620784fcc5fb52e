import FoundationEssentials
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Speaks systemd's readiness protocol (sd_notify, described in the man page's ENVIRONMENT section) without
/// libsystemd: each message is one datagram of `KEY=value` lines sent to the `AF_UNIX` socket named by
/// `$NOTIFY_SOCKET`.
///
/// Owns the notification socket address, the watchdog settings, and the last `STATUS=` sent (a status is
/// only sent when it changes). Without `$NOTIFY_SOCKET` every method does nothing, so the agent calls it
/// unconditionally. Sending never blocks for long and never fails the agent: a lost notification is logged
/// by systemd's timeouts, not by us.
public final class SystemdNotifier: Sendable {
    /// Where notifications go; nil when not started by systemd with `Type=notify`.
    let socket: UnixSocketAddress?
    /// The watchdog to keep fed; nil when off.
    let watchdog: SystemdWatchdog?
    private let lastStatus = Mutex<String?>(nil)

    /// A notifier for `socket` (nil: a notifier that does nothing) and `watchdog`.
    init(socket: UnixSocketAddress?, watchdog: SystemdWatchdog? = nil) {
        self.socket = socket
        self.watchdog = socket == nil ? nil : watchdog
    }

    /// The notifier systemd set up for this process through `NOTIFY_SOCKET`, `WATCHDOG_USEC`, `WATCHDOG_PID`.
    public convenience init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.init(
            socket: environment["NOTIFY_SOCKET"].flatMap(UnixSocketAddress.init),
            watchdog: SystemdWatchdog(environment: environment))
    }

    /// `READY=1`: start-up is done (with a first `STATUS=` line when given).
    func ready(status: String? = nil) {
        var fields = ["READY=1"]
        if let status {
            fields.append("STATUS=\(Self.oneLine(status))")
            lastStatus.withLock { $0 = Self.oneLine(status) }
        }
        send(fields)
    }

    /// `RELOADING=1` with `MONOTONIC_USEC=`, as `Type=notify-reload` expects; follow with `ready()`.
    func reloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let microseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        send(["RELOADING=1", "MONOTONIC_USEC=\(microseconds)"])
    }

    /// `STOPPING=1`: a graceful stop has begun.
    func stopping() {
        send(["STOPPING=1"])
    }

    /// `STATUS=<line>`, only when it differs from the last one sent.
    public func status(_ text: String) {
        let line = Self.oneLine(text)
        let changed = lastStatus.withLock { last in
            defer { last = line }
            return last != line
        }
        if changed { send(["STATUS=\(line)"]) }
    }

    /// Sends `WATCHDOG=1` every half watchdog period, after `probe` returns (so a wedged agent stops pinging
    /// and systemd restarts it), until the task is cancelled. Returns at once when the watchdog is off.
    func feedWatchdog(probe: @Sendable () async -> Void) async {
        guard let watchdog else { return }
        while !Task.isCancelled {
            await probe()
            send(["WATCHDOG=1"])
            try? await Task.sleep(for: watchdog.pingInterval)
        }
    }

    /// Sends one datagram of `fields`, newline-separated. Returns whether the kernel took it.
    @discardableResult
    public func send(_ fields: [String]) -> Bool {
        guard let socket else { return false }
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        let message = Array(fields.joined(separator: "\n").utf8)
        let sent = socket.withSocketAddress { address, length in
            message.withUnsafeBytes { bytes in
                sendto(descriptor, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), address, length)
            }
        }
        return sent == message.count
    }

    /// A status must be one line: newlines would start new `KEY=value` fields.
    private static func oneLine(_ text: String) -> String {
        String(text.map { $0.isNewline ? " " : $0 })
    }
}
