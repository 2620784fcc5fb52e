import EmojiArtSync
import CurlHTTP
import FoundationEssentials
import Logging
import Synchronization
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// Answers signals while a `--once` run holds DIR's lock, as far as a one-shot run can:
/// - `SIGUSR1` drops the memory cache and acknowledges in `status.json`, as the agent does, so
///   `emojiart-sync purge memory` succeeds;
/// - `SIGUSR2` is refused by name (a one-shot run does no disk purge) and the refusal is published, so
///   `emojiart-sync purge disk` fails at once saying why;
/// - `SIGHUP` reopens the log file (nothing to re-poll in a single pass);
/// - `SIGTERM`/`SIGINT` stop the pass (`stop`: the run's task is cancelled, so no asset is begun after it and
///   none it never reached is logged as failed) and abandon in-flight transfers, so the run ends promptly and
///   cleanly (the caller exits 128 + the signal); a second one exits at once.
///
/// Owns the run's purge sequence number, continued from the last published status so `purge` can tell its
/// acknowledgement from an older one.
public final class OneShotSignalResponder: Sendable {
    public static let diskPurgeRefusal = "a one-shot run (--once) does no disk purge; purge disk applies to the background agent"

    private let agent: SyncAgent
    /// Stops the run's pass (cancels its task).
    private let stop: @Sendable () -> Void
    private let startedAt = Date()
    private let interruption = Atomic<Int32>(0)
    private let purgeSequence: Mutex<Int>

    public init(agent: SyncAgent, stop: @escaping @Sendable () -> Void) {
        self.agent = agent
        self.stop = stop
        let previous = (try? AgentStatus.read(from: agent.configuration.directory.statusPath))?.lastPurge?.sequence ?? 0
        purgeSequence = Mutex(previous)
    }

    /// The signal (`SIGTERM` or `SIGINT`) that interrupted the run, if one did.
    public var interruptingSignal: Int32? {
        let signal = interruption.load(ordering: .acquiring)
        return signal == 0 ? nil : signal
    }

    private var logger: Logger { agent.logger }

    /// Answers signals until the calling task is cancelled.
    public func run(_ trapped: TrappedSignals) async {
        for await signal in trapped.sequence {
            await answer(signal)
            if Task.isCancelled { return }
        }
    }

    private func answer(_ signal: UnixSignal) async {
        switch signal {
        case .sigusr1:
            logger.info("purging memory cache", metadata: ["event": "signal", "signal": "SIGUSR1", "action": "purge memory"])
            let dropped = await agent.purgeMemory()
            acknowledge(scope: "memory", entries: dropped.entries, bytes: dropped.bytes, refused: nil)
        case .sigusr2:
            logger.warning("disk purge refused", metadata: [
                "event": "purge", "scope": "disk", "result": "refused", "reason": .string(Self.diskPurgeRefusal),
            ])
            acknowledge(scope: "disk", entries: 0, bytes: 0, refused: Self.diskPurgeRefusal)
        case .sighup:
            logger.info("reopening the log (a one-shot run does not re-poll)", metadata: [
                "event": "signal", "signal": "SIGHUP", "action": "reopen log",
            ])
            agent.reopenLog()
        case .sigterm, .sigint:
            let number: Int32 = signal == .sigint ? SIGINT : SIGTERM
            let (exchanged, _) = interruption.compareExchange(expected: 0, desired: number, ordering: .acquiringAndReleasing)
            guard exchanged else {
                logger.warning("second stop signal, exiting at once", metadata: ["event": "signal", "signal": .string("\(signal)")])
                agent.flushLog()
                _exit(128 + number)
            }
            logger.info("stopping the one-shot run", metadata: ["event": "signal", "signal": .string("\(signal)"), "action": "stop"])
            stop()
            agent.stopTransfers()  // in-flight transfers fail now; the pass ends and cleans up
        default:
            break
        }
    }

    /// Logs the purge like the agent does and publishes it in `status.json`, where `purge` looks for it.
    private func acknowledge(scope: String, entries: Int, bytes: Int, refused: String?) {
        let sequence = purgeSequence.withLock { value in
            value += 1
            return value
        }
        if refused == nil {
            logger.notice("purged", metadata: [
                "event": "purge", "scope": .string(scope), "entries": .stringConvertible(entries), "bytes": .stringConvertible(bytes),
            ])
        }
        let configuration = agent.configuration
        var status = AgentStatus(
            pid: getpid(), startedAt: startedAt, directory: configuration.directory.root, server: configuration.http.server.origin)
        status.state = "once"
        status.updatedAt = Date()
        status.lastPurge = AgentStatus.Purge(
            sequence: sequence, scope: scope, entries: entries, bytes: bytes, at: Date(), refused: refused)
        do {
            try status.write(to: configuration.directory.statusPath)
        } catch {
            logger.warning("cannot write status", metadata: ["event": "status", "error": .string(String(describing: error))])
        }
    }
}
