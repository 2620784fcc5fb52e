import CurlHTTP
import FoundationEssentials
import Logging
import ServiceLifecycle
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
/// Structure: a swift-service-lifecycle `ServiceGroup` of loops (`AgentLoop`), each asleep until something
/// happens (a signal, watcher events, a deadline, a change to publish), handing the work to the
/// `MirrorKeeper` on the `SyncActor`. `stop()` (what the first `SIGTERM` does) shuts the group down
/// gracefully: every loop is cancelled, and with it the loads only it waited for; a shutdown that takes longer
/// than `maximumStopDuration` is escalated to cancelling the group. Blocking C work (inotify reads, curl)
/// runs on threads of its own inside the watcher and the HTTP client.
public final class BackgroundAgent: Sendable {
    public let agent: SyncAgent
    public let keeper: MirrorKeeper
    /// Tells systemd (`Type=notify`) about readiness, reloads, stops and status; silent outside systemd.
    public let notifier: SystemdNotifier
    private let startedAt = Date()
    /// Whether a stop was asked for, and the group to shut down once `run()` has made it.
    private let stopping = Mutex<(requested: Bool, group: ServiceGroup?)>((false, nil))
    /// How long a graceful stop may take before the loops are cancelled outright.
    public static let maximumStopDuration: Duration = .seconds(10)
    /// How long a reload (`SIGHUP`) may hold back its `READY=1` for the pass it asked for.
    public static let maximumReloadWait: Duration = .seconds(60)
    private let watching = Mutex<String>("inotify")
    private let schedulerSleep = Mutex<SchedulerSleep?>(nil)

    /// Where the scheduler loop is: asleep until a deadline (nil: until something rings), or awake.
    public struct SchedulerSleep: Sendable, Equatable {
        /// When it wakes on its own; nil when only an event wakes it.
        public var until: ContinuousClock.Instant?
    }

    /// The scheduler's sleep now, or nil while it works: an idle agent sleeps until its next poll, with
    /// nothing due in between (what a test checks instead of watching a clock).
    public var schedulerAsleep: SchedulerSleep? { schedulerSleep.withLock { $0 } }
    private let fatal = Mutex<SyncError?>(nil)
    /// `SIGUSR2` asked for a disk purge; the purge loop runs it (coalesced: one more after a running one).
    private let diskPurgeRequested = Atomic<Bool>(false)
    private let diskPurgeAlarm = Alarm()

    public init(agent: SyncAgent, notifier: SystemdNotifier = SystemdNotifier()) async {
        self.agent = agent
        self.notifier = notifier
        self.keeper = await MirrorKeeper(
            core: agent.core, fetcher: agent.fetcher,
            configuration: agent.configuration, logger: agent.logger)
    }

    private var logger: Logger { agent.logger }
    private var directory: SyncDirectory { agent.configuration.directory }

    /// Asks the agent to stop gracefully (what `SIGTERM` does); before `run()`, it stops as soon as it starts.
    public func stop() {
        let (first, group) = stopping.withLock { state -> (Bool, ServiceGroup?) in
            defer { state.requested = true }
            return (!state.requested, state.group)
        }
        guard first else { return }
        notifier.stopping()
        if let group { Task { await group.triggerGracefulShutdown() } }
    }

    private var isStopping: Bool { stopping.withLock { $0.requested } }

    /// Runs until stopped. Returns `.success` after a graceful stop, `.fatal` when DIR or its state directory
    /// vanished (deleted, moved away, replaced) or could not be watched. `trapped`: the signals trapped before the lock was taken (else they are trapped here).
    public func run(handleSignals: Bool = true, trapped: TrappedSignals? = nil) async -> ExitStatus {
        logger.info("agent started", metadata: [
            "event": "start", "pid": .stringConvertible(getpid()), "dir": .string(directory.root),
            "server": .string(agent.configuration.server.origin),
            "interval": .string(agent.configuration.pollInterval.secondsText),
        ])
        notifier.ready(status: "first pass under way")
        // Which folder this is: if DIR or its state directory is later removed, moved or replaced, the agent stops.
        let identity = DirectoryIdentity(of: directory)
        var loops = [
            AgentLoop("watch") { await self.watchLoop(identity: identity) },
            AgentLoop("schedule") { await self.scheduleLoop(identity: identity) },
            AgentLoop("status") { await self.statusLoop() }, AgentLoop("disk-purge") { await self.diskPurgeLoop() },
            AgentLoop("requests") { await self.requestLoop() },
        ]
        if agent.configuration.scrubInterval != nil { loops.append(AgentLoop("scrub") { await self.scrubLoop() }) }
        // systemd's watchdog (when WatchdogSec= is set): a ping only while the sync actor answers.
        loops.append(AgentLoop("watchdog") { await self.notifier.feedWatchdog { _ = await self.keeper.wakeUps } })
        // Signals first: the group stops its services in reverse order, so a second SIGTERM is heard to the end.
        if handleSignals { loops.insert(AgentLoop("signals") { await self.signalLoop(trapped) }, at: 0) }
        var configuration = ServiceGroupConfiguration(
            // A loop that ends early (the watcher falling back to rescans) leaves the others running.
            services: loops.map { ServiceGroupConfiguration.ServiceConfiguration(service: $0, successTerminationBehavior: .ignore) },
            logger: logger)
        configuration.maximumGracefulShutdownDuration = Self.maximumStopDuration
        let group = ServiceGroup(configuration: configuration)
        let stopAtOnce = stopping.withLock { state in
            state.group = group
            return state.requested
        }
        if stopAtOnce { await group.triggerGracefulShutdown() }
        do {
            try await group.run()
        } catch {
            logger.error("agent loop failed", metadata: ["event": "stop", "error": .string(String(describing: error))])
        }
        // Loads whose waiters were cancelled were cancelled with them; this ends any transfer still queued.
        agent.client.shutdown()
        return await finish()
    }

    private func finish() async -> ExitStatus {
        try? await agent.core.owned.makeDurable()
        let removed = directory.removeStaleTemporaryFiles()
        var status = await currentStatus()
        status.state = "stopped"
        status.updatedAt = Date()  // when it stopped: `status` shows how long it ran
        try? status.write(to: directory.statusPath)
        let failure = fatal.withLock { $0 }
        logger.info("agent stopped", metadata: [
            "event": "stop", "temporary_files_removed": .stringConvertible(removed),
            "result": .string(failure == nil ? "ok" : "fatal"),
        ])
        agent.shutdown()
        return failure == nil ? .success : .fatal
    }

    /// The error that stopped the agent with exit status 1, if one did.
    public var failure: SyncError? { fatal.withLock { $0 } }

    private func fail(_ error: SyncError) {
        agent.core.storage.gate.shutForGood(error.message)  // nothing is renamed into DIR any more
        fatal.withLock { $0 = $0 ?? error }
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
        // Each reload waits in a child task for the pass that carries it out, then tells systemd READY=1; the
        // loop meanwhile goes on answering signals (a SIGTERM during a long pass included).
        await withDiscardingTaskGroup { reloads in
            for await signal in signals.sequence {
                switch signal {
                case .sigterm, .sigint:
                    if isStopping {
                        logger.warning("second stop signal, exiting at once", metadata: ["event": "signal", "signal": .string("\(signal)")])
                        agent.logSink.flush()
                        _exit(signal == .sigint ? 130 : 143)
                    }
                    logger.info("stopping", metadata: ["event": "signal", "signal": .string("\(signal)"), "action": "stop"])
                    stop()
                case .sighup:
                    logger.info("re-reading feed and rescanning", metadata: ["event": "signal", "signal": "SIGHUP", "action": "poll+rescan"])
                    notifier.reloading()
                    // The reopen waits for the log's queued lines to be written (up to 5 s under a pass's 300,000
                    // lines): on the blocking-I/O pool, never on one of the cooperative pool's two threads.
                    let sink = agent.logSink
                    await BlockingIO.run { sink.reopen() }
                    let pass = await keeper.reload()
                    reloads.addTask {
                        await self.waitForReload(pass)
                        // The log shows the reload's pass before systemd hears it is done.
                        await self.agent.logSink.waitUntilWritten()
                        if !Task.isCancelled && !self.isStopping { self.notifier.ready() }
                    }
                case .sigusr1:
                    logger.info("purging memory cache", metadata: ["event": "signal", "signal": "SIGUSR1", "action": "purge memory"])
                    _ = await keeper.purgeMemory()
                case .sigusr2:
                    logger.info("purging disk cache", metadata: ["event": "signal", "signal": "SIGUSR2", "action": "purge disk"])
                    requestDiskPurge()
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
            race.addTask { await self.keeper.waitForPass(pass) }
            race.addTask { try? await Task.sleep(for: Self.maximumReloadWait) }
            await race.next()
            race.cancelAll()
        }
    }

    /// Watches DIR and hands what happens in it to the keeper at once (``WatchBacklog``), and its deletions to
    /// the ``RenameGate`` that holds repairs' renames while DIR is being emptied. When DIR or its state directory is gone (deleted, moved away, replaced), the agent
    /// stops with exit status 1 naming the folder, before repairing anything into it: a folder being removed
    /// is the user's decision, and under systemd `Restart=on-failure` with the unit's `ExecStartPre=` mkdir
    /// brings the agent back on a fresh one. When inotify cannot be used at all, falls back to periodic
    /// rescans (the schedule loop does them).
    private func watchLoop(identity: DirectoryIdentity?) async {
        let watcher: DirectoryWatcher
        do {
            watcher = try DirectoryWatcher(path: directory.root)
        } catch {
            if error.kind == .instanceLimit || error.kind == .watchLimit {
                fallBackToRescans(error.message)
                return
            }
            fail(SyncError(.system, "cannot watch \(directory.root): \(error)", path: directory.root))
            return
        }
        watching.withLock { $0 = "inotify" }
        let backlog = WatchBacklog()
        let gate = agent.core.storage.gate
        gate.startWatching()
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await batch in watcher.events {
                        // Here, as each batch is read, not when the acting task gets to it: a repair waiting at the
                        // gate must see DIR gone (and the agent stop, naming why) before it could rename anything,
                        // and a deletion must hold renames even while the acting task is busy.
                        if let gone = self.vanished(batch, identity: identity) {
                            self.fail(SyncError(.system, "\(self.directory.root) is gone: \(gone); stopping", path: self.directory.root))
                        }
                        gate.note(batch)
                        backlog.add(batch)
                    }
                    backlog.end()
                }
                await act(on: backlog, identity: identity)
                watcher.requestStop()  // DIR is gone: the reader ends too
                await group.waitForAll()
            }
        } onCancel: {
            watcher.requestStop()  // never block in a cancellation handler: the reader may need this task
        }
        watcher.stop()
        if Task.isCancelled || isStopping { return }
        // The stream ended while DIR is still the same folder: poll(2) or read(2) on inotify failed.
        fallBackToRescans(watcher.failure?.message ?? "the watch ended")
    }

    /// Hands the backlog's events to the keeper as they come due, until the watch ends, DIR is gone (then the
    /// agent is stopped) or the task is cancelled.
    private func act(on backlog: WatchBacklog, identity: DirectoryIdentity?) async {
        while !Task.isCancelled {
            switch backlog.take() {
            case .wait:
                await backlog.alarm.sleep(until: nil)
            case .events(let batch, let ended):
                if let gone = vanished(batch, identity: identity) {
                    fail(SyncError(.system, "\(directory.root) is gone: \(gone); stopping", path: directory.root))
                    return
                }
                await handle(batch)
                if ended { return }
            }
        }
    }

    private func fallBackToRescans(_ reason: String) {
        watching.withLock { $0 = "polling" }
        logger.error("inotify unavailable, falling back to periodic rescans", metadata: [
            "event": "watch", "result": "fallback", "error": .string(reason),
            "rescan_every": .string(agent.configuration.fallbackRescanInterval.secondsText),
        ])
        keeper.alarm.ring()
    }

    /// Why DIR is no longer the folder the agent started on, from the watcher's events or from `stat`; nil
    /// while it still is.
    private func vanished(_ batch: [WatchEvent], identity: DirectoryIdentity?) -> String? {
        for event in batch {
            if event.endsWatch {
                if event.mask.contains(.deleteSelf) { return "it was deleted" }
                if event.mask.contains(.moveSelf) { return "it was moved away" }
                if event.mask.contains(.unmount) { return "its file system was unmounted" }
                return "the kernel ended the watch on it"
            }
            if WatchBacklog.touchesStateDirectory(event) {
                return "its state directory \(directory.stateDirectory) was \(event.mask.contains(.delete) ? "deleted" : "moved away")"
            }
        }
        return identity?.change(in: directory)
    }

    private func handle(_ batch: [WatchEvent]) async {
        // Repairs start once deletions in DIR pause (5 ms after a lone one): a repair stages its file in the
        // state directory, which `rm -rf DIR` may be about to remove (a file created there meanwhile makes `rm`
        // fail). The agent's own renames never count, so nothing waits behind its own writes.
        if await agent.core.storage.gate.waitUntilOpen() != nil { return }  // DIR is gone: the act loop stops
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
        await keeper.checkPending(urgentOnly: true)
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

    /// Hears the requests of commands (`RequestInbox`, its own inotify watch on `DIR/.emojiart-sync/requests/`):
    /// `emojiart-sync scrub` asks for a scrub now. One left before the agent started is taken at once.
    private func requestLoop() async {
        let watcher: DirectoryWatcher
        do {
            try RequestInbox.prepare(in: directory)
            watcher = try DirectoryWatcher(path: RequestInbox.path(in: directory))
        } catch {
            logger.warning("cannot hear the requests of commands (emojiart-sync scrub)", metadata: [
                "event": "watch", "result": "failed", "path": .string(RequestInbox.path(in: directory)),
                "error": .string(String(describing: error)),
            ])
            return
        }
        await withTaskCancellationHandler {
            await answerRequests()
            for await _ in watcher.events {
                if Task.isCancelled { break }
                await answerRequests()
            }
        } onCancel: {
            watcher.requestStop()  // never block in a cancellation handler
        }
        watcher.stop()
    }

    private func answerRequests() async {
        for request in RequestInbox.take(in: directory) {
            switch request {
            case .scrub:
                logger.info("scrubbing every file now, as asked", metadata: ["event": "scrub", "result": "requested"])
                await keeper.scrubNow()
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
    private func scheduleLoop(identity: DirectoryIdentity?) async {
        var nextRescan = ContinuousClock.now.advanced(by: agent.configuration.fallbackRescanInterval)
        while !Task.isCancelled {
            // Without inotify (or between its events), a poll or retry is the next chance to see DIR is gone.
            if let gone = identity?.change(in: directory) {
                fail(SyncError(.system, "\(directory.root) is gone: \(gone); stopping", path: directory.root))
                return
            }
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
            let until = next.map { max($0, earliest) }
            schedulerSleep.withLock { $0 = SchedulerSleep(until: until) }
            await keeper.alarm.sleep(until: until)
            schedulerSleep.withLock { $0 = nil }
        }
    }

    /// Publishes `status.json` when something changed, at most four times a second; asleep otherwise.
    /// A write that fails is logged once, not at every change, until a write works again (also logged).
    private func statusLoop() async {
        let changes = agent.core.log.changes
        var failing = false
        while !Task.isCancelled {
            var status = await currentStatus()
            notifier.status(status.systemdStatusLine)
            agent.fetcher.metrics.observe(status, indexFiles: status.indexFiles ?? 0)
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

    private func currentStatus() async -> AgentStatus {
        var base = AgentStatus(pid: getpid(), startedAt: startedAt, directory: directory.root, server: agent.configuration.server.origin)
        base.watching = watching.withLock { $0 }
        base.logFile = agent.configuration.effectiveLogFile
        return await keeper.status(base: base)
    }
}
