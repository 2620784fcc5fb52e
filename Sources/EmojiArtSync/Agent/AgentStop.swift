import Logging
import ServiceLifecycle
import Synchronization

/// How the background agent stops: whether a stop was asked for, the service group to shut down once
/// `BackgroundAgent.run()` has made it, and the error that stopped the agent, if one did. The first stop wins
/// (systemd hears `STOPPING=1` once, and a second `SIGTERM` is told apart from the first); the first fatal error
/// is kept (the exit status and the last words name the cause, not what followed from it).
///
/// Lock: any loop, a signal or a caller of `BackgroundAgent.stop()` may stop the agent, from any thread.
final class AgentStop: Sendable {
    private struct State {
        var requested = false
        var group: ServiceGroup?
        var fatal: SyncError?
    }

    private let state = Mutex(State())
    private let notifier: SystemdNotifier
    /// Shut for good by a fatal error: nothing is renamed into DIR any more.
    private let gate: RenameGate
    private let logger: Logger

    init(notifier: SystemdNotifier, gate: RenameGate, logger: Logger) {
        self.notifier = notifier
        self.gate = gate
        self.logger = logger
    }

    /// Asks the agent to stop gracefully; before the group exists, it is shut down as soon as it is made.
    func request() {
        let (first, group) = state.withLock { state -> (Bool, ServiceGroup?) in
            defer { state.requested = true }
            return (!state.requested, state.group)
        }
        guard first else { return }
        notifier.stopping()
        if let group { Task { await group.triggerGracefulShutdown() } }
    }

    var isRequested: Bool { state.withLock { $0.requested } }

    /// The error that stopped the agent with exit status 1, if one did.
    var failure: SyncError? { state.withLock { $0.fatal } }

    /// Stops the agent with exit status 1 because of `error`. Only the first fatal error is logged: every job that
    /// meets the same end reports it (a `rm -rf DIR` during a cold sync of 100,000 wrote the same line 126 times).
    func fail(_ error: SyncError) {
        gate.shutForGood(error.message)  // nothing is renamed into DIR any more
        let first = state.withLock { state -> Bool in
            defer { state.fatal = state.fatal ?? error }
            return state.fatal == nil
        }
        if first { logger.critical("stopping", metadata: ["event": "fatal", "error": .string(error.message)]) }
        request()
    }

    /// Stops the agent with exit status 1: DIR is no longer the folder it started on (`why`).
    func directoryGone(_ directory: SyncDirectory, _ why: String) {
        fail(SyncError(.system, "\(directory.root) is gone: \(why); stopping", path: directory.root))
    }

    /// Hands over the group `run()` made; returns whether a stop was asked for before (the caller shuts it down).
    func attach(_ group: ServiceGroup) -> Bool {
        state.withLock { state in
            state.group = group
            return state.requested
        }
    }
}
