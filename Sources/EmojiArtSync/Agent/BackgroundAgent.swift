import CurlHTTP
import FoundationEssentials
import Logging
import ServiceLifecycle

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
/// Structure: a swift-service-lifecycle `ServiceGroup` of services, one per loop (`SignalService`,
/// `WatchService`, `ScheduleService`, `StatusService`, `DiskPurgeService`, `RequestService`, `ScrubService`,
/// `WatchdogService`), each asleep until something happens (a signal, watcher events, a deadline, a change to
/// publish), handing the work to the `MirrorKeeper` on the `SyncActor`. Owns what the services share: how the agent
/// stops (`AgentStop`), how DIR is watched (`WatchMode`), where the scheduler sleeps. `stop()` (what the first
/// `SIGTERM` does) shuts the group down gracefully: every service is cancelled, and with it the loads only it waited
/// for; a shutdown that takes longer than `maximumStopDuration` is escalated to cancelling the group. Blocking C
/// work (inotify reads, curl) runs on threads of its own inside the watcher and the HTTP client.
public final class BackgroundAgent: Sendable {
    public let agent: SyncAgent
    let keeper: MirrorKeeper
    /// Tells systemd (`Type=notify`) about readiness, reloads, stops and status; silent outside systemd.
    let notifier: SystemdNotifier
    /// How long a graceful stop may take before the loops are cancelled outright.
    static let maximumStopDuration: Duration = .seconds(10)
    /// How long a reload (`SIGHUP`) may hold back its `READY=1` for the pass it asked for.
    static let maximumReloadWait: Duration = .seconds(60)
    private let stopping: AgentStop
    private let watchMode: WatchMode
    private let schedulerSleep = SchedulerSleepRecord()
    private let diskPurge: DiskPurgeService
    private let statusService: StatusService

    /// Where the scheduler loop is: asleep until a deadline (nil: until something rings), or awake.
    struct SchedulerSleep: Sendable, Equatable {
        /// When it wakes on its own; nil when only an event wakes it.
        var until: ContinuousClock.Instant?
    }

    /// The scheduler's sleep now, or nil while it works: an idle agent sleeps until its next poll, with
    /// nothing due in between (what a test checks instead of watching a clock).
    var schedulerAsleep: SchedulerSleep? { schedulerSleep.current }

    public init(agent: SyncAgent, notifier: SystemdNotifier = SystemdNotifier()) async {
        self.agent = agent
        self.notifier = notifier
        let keeper = await MirrorKeeper(
            core: agent.core, fetcher: agent.fetcher,
            configuration: agent.configuration, logger: agent.siloLogger)
        self.keeper = keeper
        let watchMode = WatchMode()
        self.watchMode = watchMode
        let stopping = AgentStop(notifier: notifier, gate: agent.core.storage.gate, logger: agent.logger)
        self.stopping = stopping
        let directory = agent.configuration.directory
        // Its lock or index deleted, the state directory is being removed (`rm -rf DIR` got inside it, or someone
        // emptied it): the agent stops, as when the state directory itself goes, instead of repairing into it. The
        // gate looks by path, so DIR moved away reads as its lock deleted: when DIR itself is no longer the folder
        // the agent began in, that is what the agent says.
        let identity = DirectoryIdentity(of: directory)
        agent.core.storage.gate.whenStateFileDeleted { file in
            let why = identity?.change(in: directory)
                ?? "\(file) was deleted: the state directory of \(directory.root) is being removed"
            stopping.fail(SyncError(.system, "\(why); stopping", path: directory.stateDirectory))
        }
        diskPurge = DiskPurgeService(keeper: keeper)
        statusService = StatusService(
            keeper: keeper, directory: agent.configuration.directory, gate: agent.core.storage.gate, server: agent.configuration.http.server.origin,
            logFile: agent.configuration.effectiveLogFile, startedAt: Date(), mode: watchMode,
            changes: agent.core.log.changes, notifier: notifier, metrics: agent.fetcher.metrics, logger: agent.logger)
    }

    private var logger: Logger { agent.logger }
    private var directory: SyncDirectory { agent.configuration.directory }

    /// Asks the agent to stop gracefully (what `SIGTERM` does); before `run()`, it stops as soon as it starts.
    public func stop() {
        stopping.request()
    }

    /// Runs until stopped. Returns `.success` after a graceful stop, `.fatal` when DIR or its state directory
    /// vanished (deleted, moved away, replaced) or could not be watched. `trapped`: the signals trapped before the lock was taken (else they are trapped here).
    public func run(handleSignals: Bool = true, trapped: TrappedSignals? = nil) async -> ExitStatus {
        logger.info("agent started", metadata: [
            "event": "start", "pid": .stringConvertible(getpid()), "dir": .string(directory.root),
            "server": .string(agent.configuration.http.server.origin),
            "interval": .string(agent.configuration.schedule.pollInterval.secondsText),
        ])
        notifier.ready(status: "first pass under way")
        let group = ServiceGroup(configuration: groupConfiguration(handleSignals: handleSignals, trapped: trapped))
        if stopping.attach(group) { await group.triggerGracefulShutdown() }
        do {
            try await group.run()
        } catch {
            logger.error("agent loop failed", metadata: ["event": "stop", "error": .string(String(describing: error))])
        }
        // Loads whose waiters were cancelled were cancelled with them; this ends any transfer still queued.
        agent.client.shutdown()
        return await finish()
    }

    /// The services, in the order the group starts them (and the reverse of the order it stops them in).
    private func groupConfiguration(handleSignals: Bool, trapped: TrappedSignals?) -> ServiceGroupConfiguration {
        let configuration = agent.configuration
        // Which folder this is: if DIR or its state directory is later removed, moved or replaced, the agent stops.
        let identity = DirectoryIdentity(of: directory)
        var services: [any AgentService] = [
            WatchService(
                directory: directory, identity: identity, gate: agent.core.storage.gate, keeper: keeper, mode: watchMode,
                stop: stopping, fallbackRescanInterval: configuration.schedule.fallbackRescanInterval, logger: logger),
            ScheduleService(
                directory: directory, identity: identity, keeper: keeper, mode: watchMode, stop: stopping,
                fallbackRescanInterval: configuration.schedule.fallbackRescanInterval, sleep: schedulerSleep),
            statusService, diskPurge,
            RequestService(directory: directory, keeper: keeper, logger: logger),
        ]
        if configuration.schedule.scrubInterval != nil { services.append(ScrubService(keeper: keeper)) }
        services.append(WatchdogService(notifier: notifier, keeper: keeper))
        // Signals first: the group stops its services in reverse order, so a second SIGTERM is heard to the end.
        if handleSignals {
            services.insert(SignalService(
                trapped: trapped, keeper: keeper, stop: stopping, diskPurge: diskPurge, notifier: notifier,
                logSink: agent.logSink, logger: logger), at: 0)
        }
        var group = ServiceGroupConfiguration(services: services.map(\.groupConfiguration), logger: logger)
        group.maximumGracefulShutdownDuration = Self.maximumStopDuration
        return group
    }

    private func finish() async -> ExitStatus {
        try? await agent.core.owned.makeDurable()
        let removed = directory.removeStaleTemporaryFiles()
        await statusService.writeLast()
        let failure = stopping.failure
        logger.info("agent stopped", metadata: [
            "event": "stop", "temporary_files_removed": .stringConvertible(removed),
            "result": .string(failure == nil ? "ok" : "fatal"),
        ])
        agent.shutdown()
        return failure == nil ? .success : .fatal
    }

    /// The error that stopped the agent with exit status 1, if one did.
    public var failure: SyncError? { stopping.failure }

    /// Asks for a disk purge (what `SIGUSR2` does); one asked for during a purge runs right after it.
    func requestDiskPurge() {
        diskPurge.request()
    }
}
