import CurlHTTP
import Foundation
import Logging
import Synchronization
import UnixSignals

#if canImport(Glibc)
import Glibc
#endif

/// The agent a user starts once and forgets: an initial full pass, then it watches DIR with inotify,
/// polls the feed every interval (and on `SIGHUP`), retries failures when due, answers signals, and
/// publishes its status, until `SIGTERM`/`SIGINT` (or `stop()`).
///
/// Signals, as the man page documents them:
/// - `SIGUSR1` purges the memory cache; `SIGUSR2` purges the disk cache (the agent's files only) and re-fetches;
/// - `SIGHUP` re-reads the feed, rescans DIR and reopens the log file;
/// - `SIGTERM`/`SIGINT` stop gracefully (exit 0 within about two seconds); a second one exits at once.
///
/// Structure: one task group of loops that each await something (signals, watcher events, a 250 ms tick)
/// and hand the work to the `MirrorKeeper` on the `SyncActor`. Blocking C work (inotify reads, curl) runs on
/// threads of its own inside the watcher and the HTTP client.
public final class BackgroundAgent: Sendable {
    public let agent: SyncAgent
    public let keeper: MirrorKeeper
    /// Tells systemd (`Type=notify`) about readiness, reloads, stops and status; silent outside systemd.
    public let notifier: SystemdNotifier
    private let startedAt = Date()
    private let stopRequested = Atomic<Bool>(false)
    private let stopSignal: AsyncStream<Void>.Continuation
    private let stopStream: AsyncStream<Void>
    private let watching = Mutex<String>("inotify")
    private let fatal = Mutex<SyncError?>(nil)
    /// The lock taken on a recreated DIR (the original lock file went with the old one).
    private let replacementLock = Mutex<DirectoryLock?>(nil)
    /// `SIGUSR2` asked for a disk purge; the purge loop runs it (coalesced: one more after a running one).
    private let diskPurgeRequested = Atomic<Bool>(false)
    private let diskPurgeAlarm = Alarm()

    public init(agent: SyncAgent, notifier: SystemdNotifier = SystemdNotifier()) async {
        self.agent = agent
        self.notifier = notifier
        self.keeper = await MirrorKeeper(
            database: agent.database, fetcher: agent.fetcher, loader: agent.loader,
            configuration: agent.configuration, logger: agent.logger)
        (stopStream, stopSignal) = AsyncStream.makeStream(of: Void.self)
    }

    private var logger: Logger { agent.logger }
    private var directory: SyncDirectory { agent.configuration.directory }

    /// Asks the agent to stop gracefully (what `SIGTERM` does).
    public func stop() {
        if !stopRequested.exchange(true, ordering: .acquiringAndReleasing) {
            stopSignal.yield()
            stopSignal.finish()
        }
    }

    /// Runs until stopped. Returns `.success` after a graceful stop, `.fatal` when DIR vanished and could not
    /// be recreated. `trapped`: the signals trapped before the lock was taken (else they are trapped here).
    public func run(handleSignals: Bool = true, trapped: TrappedSignals? = nil) async -> ExitStatus {
        logger.info("agent started", metadata: [
            "event": "start", "pid": .stringConvertible(getpid()), "dir": .string(directory.root),
            "server": .string(agent.configuration.server.origin),
            "interval": .string(agent.configuration.pollInterval.secondsText),
        ])
        notifier.ready(status: "first pass under way")
        await withTaskGroup(of: Void.self) { group in
            if handleSignals {
                group.addTask { await self.signalLoop(trapped) }
            }
            group.addTask { await self.watchLoop() }
            group.addTask { await self.scheduleLoop() }
            group.addTask { await self.statusLoop() }
            group.addTask { await self.diskPurgeLoop() }
            if agent.configuration.scrubInterval != nil {
                group.addTask { await self.scrubLoop() }
            }
            // systemd's watchdog (when WatchdogSec= is set): a ping only while the sync actor answers.
            group.addTask { await self.notifier.feedWatchdog { _ = await self.keeper.wakeUps } }
            for await _ in stopStream {}
            notifier.stopping()
            group.cancelAll()
            // In-flight transfers belong to unstructured loads; failing them ends those loads promptly.
            agent.client.shutdown()
        }
        return await finish()
    }

    private func finish() async -> ExitStatus {
        try? await agent.database.makeDurable()
        let removed = directory.removeStaleTemporaryFiles()
        var status = await currentStatus()
        status.state = "stopped"
        try? status.write(to: directory.statusPath)
        let failure = fatal.withLock { $0 }
        logger.info("agent stopped", metadata: [
            "event": "stop", "temporary_files_removed": .stringConvertible(removed),
            "result": .string(failure == nil ? "ok" : "fatal"),
        ])
        agent.shutdown()
        replacementLock.withLock { $0?.release() }
        return failure == nil ? .success : .fatal
    }

    private func fail(_ error: SyncError) {
        fatal.withLock { $0 = error }
        logger.critical("stopping", metadata: ["event": "fatal", "error": .string(error.message)])
        stop()
    }

    // MARK: - Loops

    private func signalLoop(_ trapped: TrappedSignals?) async {
        let signals: TrappedSignals
        if let trapped {
            signals = trapped
        } else {
            signals = await TrappedSignals.trap()
        }
        for await signal in signals.sequence {
            switch signal {
            case .sigterm, .sigint:
                if stopRequested.load(ordering: .acquiring) {
                    logger.warning("second stop signal, exiting at once", metadata: ["event": "signal", "signal": .string("\(signal)")])
                    _exit(signal == .sigint ? 130 : 143)
                }
                logger.info("stopping", metadata: ["event": "signal", "signal": .string("\(signal)"), "action": "stop"])
                stop()
            case .sighup:
                logger.info("re-reading feed and rescanning", metadata: ["event": "signal", "signal": "SIGHUP", "action": "poll+rescan"])
                notifier.reloading()
                agent.logSink.reopen()
                await keeper.forgetFailures()
                await keeper.pollNow(fullPass: true)
                await keeper.rescanAll()
                notifier.ready()
            case .sigusr1:
                logger.info("purging memory cache", metadata: ["event": "signal", "signal": "SIGUSR1", "action": "purge memory"])
                _ = await keeper.purgeMemory()
            case .sigusr2:
                logger.info("purging disk cache", metadata: ["event": "signal", "signal": "SIGUSR2", "action": "purge disk"])
                requestDiskPurge()
            default:
                break
            }
            if Task.isCancelled { return }
        }
    }

    /// Watches DIR; when the watch ends because DIR was deleted or moved, recreates DIR and watches again.
    /// When inotify cannot be used at all, falls back to periodic rescans (the tick loop does them).
    private func watchLoop() async {
        var restarts = 0
        while !Task.isCancelled {
            let watcher: DirectoryWatcher
            do {
                watcher = try DirectoryWatcher(path: directory.root)
            } catch {
                if error.kind == .instanceLimit || error.kind == .watchLimit {
                    watching.withLock { $0 = "polling" }
                    logger.error("inotify unavailable, falling back to periodic rescans", metadata: [
                        "event": "watch", "result": "fallback", "error": .string(error.message),
                        "rescan_every": .string(agent.configuration.fallbackRescanInterval.secondsText),
                    ])
                    return
                }
                fail(SyncError(.system, "cannot watch \(directory.root): \(error)", path: directory.root))
                return
            }
            watching.withLock { $0 = "inotify" }
            await withTaskCancellationHandler {
                for await batch in watcher.events {
                    await handle(batch)
                }
            } onCancel: {
                watcher.requestStop()  // never block in a cancellation handler: the reader may need this task
            }
            watcher.stop()
            if Task.isCancelled { return }
            // The watch ended on its own: DIR was deleted, moved away or unmounted.
            restarts += 1
            logger.warning("directory gone, recreating it", metadata: ["event": "watch", "result": "dir_gone", "dir": .string(directory.root)])
            do {
                try directory.prepare()
                let lock = try DirectoryLock.acquire(path: directory.lockPath)
                replacementLock.withLock { $0 = lock }
                await keeper.rescanAll()
                await keeper.pollNow()
            } catch {
                fail(SyncError(.system, "\(directory.root) disappeared and cannot be recreated: \(error)", path: directory.root))
                return
            }
            if restarts > 1 {
                try? await Task.sleep(for: .milliseconds(min(5000, 100 * (1 << min(restarts, 6)))))
            }
        }
    }

    private func handle(_ batch: [WatchEvent]) async {
        var names: [String] = []
        var rescan = false
        for event in batch {
            if event.mask.contains(.queueOverflow) {
                rescan = true
            } else if let name = event.name, !name.hasPrefix(".") {
                names.append(name)
            }
        }
        if rescan {
            logger.warning("inotify queue overflowed, rescanning", metadata: ["event": "watch", "result": "overflow"])
            await keeper.rescanAll()
        }
        await keeper.noteChanged(fileNames: names)
        await keeper.checkPending()
    }

    /// Asks for a disk purge (what `SIGUSR2` does); one asked for during a purge runs right after it.
    public func requestDiskPurge() {
        diskPurgeRequested.store(true, ordering: .releasing)
        diskPurgeAlarm.ring()
    }

    private func diskPurgeLoop() async {
        while !Task.isCancelled {
            await diskPurgeAlarm.sleep(until: nil)
            if Task.isCancelled { return }
            if diskPurgeRequested.exchange(false, ordering: .acquiringAndReleasing) {
                _ = await keeper.purgeDisk()
            }
        }
    }

    /// A scrub step a minute (the first a minute after start), nothing in between.
    private func scrubLoop() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: Scrubber.stepPeriod)
            if Task.isCancelled { return }
            await keeper.scrubStep()
        }
    }

    /// Runs the keeper's due work (polls, retries, queued checks, the fallback rescan when inotify is not
    /// available), then sleeps until the next deadline or until something rings the keeper's alarm.
    private func scheduleLoop() async {
        var nextRescan = ContinuousClock.now.advanced(by: agent.configuration.fallbackRescanInterval)
        while !Task.isCancelled {
            var next = await keeper.runDueWork()
            if watching.withLock({ $0 }) == "polling" {
                if ContinuousClock.now >= nextRescan {
                    nextRescan = ContinuousClock.now.advanced(by: agent.configuration.fallbackRescanInterval)
                    await keeper.rescanAll()
                    keeper.alarm.ring()
                }
                next = next.map { min($0, nextRescan) } ?? nextRescan
            }
            // Something due but blocked (a retry whose repair still runs) must not spin the loop.
            let earliest = ContinuousClock.now.advanced(by: .milliseconds(50))
            await keeper.alarm.sleep(until: next.map { max($0, earliest) })
        }
    }

    /// Publishes `status.json` when something changed, at most four times a second; asleep otherwise.
    private func statusLoop() async {
        let changes = agent.database.changes
        while !Task.isCancelled {
            var status = await currentStatus()
            notifier.status(status.systemdStatusLine)
            agent.fetcher.metrics.observe(status, indexFiles: status.indexFiles ?? 0)
            status.updatedAt = Date()
            do {
                try status.write(to: directory.statusPath)
            } catch {
                logger.warning("cannot write status", metadata: ["event": "status", "error": .string(String(describing: error))])
            }
            await changes.sleep(until: nil)
            try? await Task.sleep(for: .milliseconds(250))
        }
    }

    private func currentStatus() async -> AgentStatus {
        var base = AgentStatus(pid: getpid(), startedAt: startedAt, directory: directory.root, server: agent.configuration.server.origin)
        base.watching = watching.withLock { $0 }
        return await keeper.status(base: base)
    }
}
