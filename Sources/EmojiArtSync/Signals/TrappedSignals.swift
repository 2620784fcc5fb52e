import UnixSignals

/// The signals a process holding DIR's lock may be sent, trapped: `emojiart-sync purge` (`SIGUSR1`,
/// `SIGUSR2`), a reload (`SIGHUP`) and a stop (`SIGTERM`, `SIGINT`).
///
/// Create it before taking the lock (`SyncAgent.init`): `purge` signals whoever holds the lock, and an
/// untrapped `SIGUSR1` kills a process. Signals that arrive before anyone reads the sequence wait in it.
/// Owns the trap for the process's lifetime; there is one per process (a second trap of the same signals
/// would split their delivery).
public final class TrappedSignals: Sendable {
    public static let signals: [UnixSignal] = [.sigterm, .sigint, .sighup, .sigusr1, .sigusr2]

    package let sequence: UnixSignalsSequence

    private init(sequence: UnixSignalsSequence) {
        self.sequence = sequence
    }

    /// Installs the traps; returns once the kernel delivers these signals to them.
    public static func trap() async -> TrappedSignals {
        TrappedSignals(sequence: await UnixSignalsSequence(trapping: signals))
    }
}
