/// Feeds systemd's watchdog (`WatchdogSec=`): a ping only while the `SyncActor` silo answers, so a wedged agent
/// stops pinging and systemd restarts it. Ends at once when the watchdog is off.
struct WatchdogService: AgentService {
    let name = "watchdog"
    let notifier: SystemdNotifier
    let keeper: MirrorKeeper

    func loop() async {
        await notifier.feedWatchdog { _ = await keeper.wakeUps }
    }
}
