/// Runs the keeper's due work (polls, retries, queued checks, the rescans that stand in for inotify when it cannot
/// be used), then sleeps until the next deadline or until something rings the keeper's alarm.
struct ScheduleService: AgentService {
    let name = "schedule"
    let directory: SyncDirectory
    /// Which folder DIR was when the agent started; nil when it could not be `stat`ed then.
    let identity: DirectoryIdentity?
    let keeper: MirrorKeeper
    let mode: WatchMode
    let stop: AgentStop
    let fallbackRescanInterval: Duration
    /// Where this loop is, for `BackgroundAgent.schedulerAsleep`.
    let sleep: SchedulerSleepRecord

    func loop() async {
        var nextRescan = ContinuousClock.now.advanced(by: fallbackRescanInterval)
        while !Task.isCancelled {
            // Without inotify (or between its events), a poll or retry is the next chance to see DIR is gone.
            if let gone = identity?.change(in: directory) {
                stop.directoryGone(directory, gone)
                return
            }
            var next = await keeper.runDueWork()
            if mode.current == .polling {
                if ContinuousClock.now >= nextRescan {
                    nextRescan = ContinuousClock.now.advanced(by: fallbackRescanInterval)
                    await keeper.repairs.rescanAll()
                    keeper.alarm.ring()
                }
                next = next.map { min($0, nextRescan) } ?? nextRescan
            }
            // Something due but blocked (a retry whose repair still runs) must not spin the loop.
            let earliest = ContinuousClock.now.advanced(by: .milliseconds(50))
            let until = next.map { max($0, earliest) }
            sleep.set(BackgroundAgent.SchedulerSleep(until: until))
            await keeper.alarm.sleep(until: until)
            sleep.set(nil)
        }
    }
}
