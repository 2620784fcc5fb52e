import FoundationEssentials
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// Publishes the agent's status (`status.json`, systemd's `STATUS=`, the metrics' gauges) when something changed,
/// at most four times a second, asleep otherwise. A write that fails is logged once, not at every change, until a
/// write works again (also logged). The agent writes the last status through it when it stops.
///
/// `status.json` is written through a new name in the state directory, so it waits for the `RenameGate` as a
/// repair does: a name made there while `rm -rf DIR` is inside it makes `rm` fail ("Directory not empty"), and a
/// status write is what the deletions `rm` makes ring for. Once DIR or its state directory is gone, nothing is
/// written again.
struct StatusService: AgentService {
    let name = "status"
    let keeper: MirrorKeeper
    let directory: SyncDirectory
    /// Shut while DIR is being emptied, and for good once it is gone.
    let gate: RenameGate
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
            // The snapshot comes first (it may wait for the silo): between the gate's look and the write there is
            // nothing to wait for.
            if let gone = await gate.waitUntilOpen() {
                logger.info("status no longer written: \(gone)", metadata: ["event": "status", "result": "stopped"])
                return
            }
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

    /// Writes the last status, as the agent stops (`state` = `stopped`), unless DIR or its state directory is gone
    /// or being emptied: then nothing is written into it. Returns whether it wrote.
    @discardableResult
    func writeLast() async -> Bool {
        var status = await snapshot()
        status.state = "stopped"
        guard await gate.waitUntilOpen() == nil else { return false }
        status.updatedAt = Date()  // when it stopped: `status` shows how long it ran
        do {
            try status.write(to: directory.statusPath)
            return true
        } catch {
            logger.warning("cannot write the last status", metadata: [
                "event": "status", "result": "failed", "error": .string(String(describing: error)),
            ])
            return false
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
