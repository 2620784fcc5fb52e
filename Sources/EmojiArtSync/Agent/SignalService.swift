import Logging
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// Answers the signals the man page documents: `SIGTERM`/`SIGINT` stop gracefully (a second one exits at once
/// with 143/130), `SIGHUP` reopens the log and reloads (systemd hears `READY=1` once the reload's pass is done),
/// `SIGUSR1` purges the memory cache, `SIGUSR2` asks for a disk purge.
///
/// First in the agent's group: the group stops its services in reverse order, so a second `SIGTERM` is heard
/// until the very end.
struct SignalService: AgentService {
    let name = "signals"
    /// The signals trapped before the directory lock was taken; nil: trapped when the loop starts.
    let trapped: TrappedSignals?
    let keeper: MirrorKeeper
    let stop: AgentStop
    let diskPurge: DiskPurgeService
    let notifier: SystemdNotifier
    let logSink: LogSink
    let logger: Logger

    func loop() async {
        let signals: TrappedSignals
        if let trapped {
            signals = trapped
        } else {
            signals = await TrappedSignals.trap()
        }
        // Each reload waits in a child task for the pass that carries it out, then tells systemd READY=1; the
        // loop meanwhile goes on answering signals (a SIGTERM during a long pass included).
        await withDiscardingTaskGroup { reloads in
            for await signal in signals.sequence {
                switch signal {
                case .sigterm, .sigint:
                    if stop.isRequested {
                        logger.warning("second stop signal, exiting at once", metadata: ["event": "signal", "signal": .string("\(signal)")])
                        logSink.flush()
                        _exit(signal == .sigint ? 130 : 143)
                    }
                    logger.info("stopping", metadata: ["event": "signal", "signal": .string("\(signal)"), "action": "stop"])
                    stop.request()
                case .sighup:
                    logger.info("re-reading feed and rescanning", metadata: ["event": "signal", "signal": "SIGHUP", "action": "poll+rescan"])
                    notifier.reloading()
                    // The reopen waits for the log's queued lines to be written (up to 5 s under a pass's 300,000
                    // lines): on the blocking-I/O pool, never on one of the cooperative pool's two threads.
                    let sink = logSink
                    await BlockingIO.run { sink.reopen() }
                    let pass = await keeper.reload()
                    reloads.addTask {
                        await waitForReload(pass)
                        // The log shows the reload's pass before systemd hears it is done.
                        await logSink.waitUntilWritten()
                        if !Task.isCancelled && !stop.isRequested { notifier.ready() }
                    }
                case .sigusr1:
                    logger.info("purging memory cache", metadata: ["event": "signal", "signal": "SIGUSR1", "action": "purge memory"])
                    _ = await keeper.purgeMemory()
                case .sigusr2:
                    logger.info("purging disk cache", metadata: ["event": "signal", "signal": "SIGUSR2", "action": "purge disk"])
                    diskPurge.request()
                default:
                    break
                }
                if Task.isCancelled { break }
            }
            reloads.cancelAll()  // a reload still waiting when the agent stops sends nothing
        }
    }

    /// Waits for scheduler pass `pass` (a reload's) to end, or `maximumReloadWait`, whichever comes first:
    /// `systemctl reload` returns once the feed was re-read and DIR rescanned, and never runs into systemd's
    /// timeout (`TimeoutStartSec=`, 90 s by default) on a slow pass over a large gallery.
    private func waitForReload(_ pass: Int) async {
        await withTaskGroup(of: Void.self) { race in
            race.addTask { await keeper.waitForPass(pass) }
            race.addTask { try? await Task.sleep(for: BackgroundAgent.maximumReloadWait) }
            await race.next()
            race.cancelAll()
        }
    }
}
