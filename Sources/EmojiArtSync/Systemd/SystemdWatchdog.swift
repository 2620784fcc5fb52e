#if canImport(Glibc)
import Glibc
#endif

/// The service watchdog systemd asks for through `$WATCHDOG_USEC` (and `$WATCHDOG_PID`): when it is on, the
/// agent must send `WATCHDOG=1` more often than every `timeout`; it pings at half of it, as systemd.service(5)
/// recommends.
struct SystemdWatchdog: Sendable, Equatable {
    /// The timeout systemd enforces (`WatchdogSec=`).
    let timeout: Duration

    /// How often to ping: half the timeout.
    var pingInterval: Duration { timeout / 2 }

    /// The watchdog from the environment, or nil when it is off: `WATCHDOG_USEC` unset, zero or unreadable,
    /// or `WATCHDOG_PID` naming another process (the variables were inherited, not meant for us).
    init?(environment: [String: String], pid: pid_t = getpid()) {
        guard let text = environment["WATCHDOG_USEC"], let microseconds = UInt64(text), microseconds > 0 else {
            return nil
        }
        if let owner = environment["WATCHDOG_PID"], !owner.isEmpty, pid_t(owner) != pid {
            return nil
        }
        timeout = .microseconds(microseconds)
    }
}
