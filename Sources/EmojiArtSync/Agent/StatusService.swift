import FoundationEssentials
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Publishes the agent's status (`status.json`, systemd's `STATUS=`, the metrics' gauges) when something changed,
/// at most four times a second, asleep otherwise. A write that fails is logged once, not at every change, until a
/// write works again (also logged). The agent writes the last status through it when it stops.
struct StatusService: AgentService {
    let name = "status"
    let keeper: MirrorKeeper
    let directory: SyncDirectory
    let server: String
    let logFile: String?
    let startedAt: Date
    let mode: WatchMode
    /// Rung by the mirror's parts whenever something `status` shows changed.
    let changes: Alarm
    let notifier: SystemdNotifier
    let metrics: SyncMetrics
    let logger: Logger

    func loop() async {
        var failing = false
        while !Task.isCancelled {
            var status = await snapshot()
            notifier.status(status.systemdStatusLine)
            metrics.observe(status, indexFiles: status.indexFiles ?? 0)
            status.updatedAt = Date()
            do {
                try status.write(to: directory.statusPath)
                if failing {
                    failing = false
                    logger.info("status written again", metadata: ["event": "status", "result": "ok"])
                }
            } catch {
                if !failing {
                    failing = true
                    logger.warning("cannot write status (logged once until a write works again)", metadata: [
                        "event": "status", "result": "failed", "error": .string(String(describing: error)),
                    ])
                }
            }
            await changes.sleep(until: nil)
            try? await Task.sleep(for: .milliseconds(250))
        }
    }

    /// The agent's status now.
    func snapshot() async -> AgentStatus {
        var base = AgentStatus(pid: getpid(), startedAt: startedAt, directory: directory.root, server: server)
        base.watching = mode.current.rawValue
        base.logFile = logFile
        return await keeper.status(base: base)
    }
}
