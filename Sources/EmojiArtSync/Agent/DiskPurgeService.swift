import Synchronization

/// Runs the disk purges `SIGUSR2` asks for (`MirrorKeeper.purgeDisk`), one at a time: a request made while a
/// purge runs makes one more run right after it (requests coalesce, none is lost). The signal loop only asks, so
/// it goes on answering signals during a purge.
final class DiskPurgeService: AgentService {
    let name = "disk-purge"
    private let keeper: MirrorKeeper
    private let requested = Atomic<Bool>(false)
    private let alarm = Alarm()

    init(keeper: MirrorKeeper) {
        self.keeper = keeper
    }

    /// Asks for a disk purge.
    func request() {
        requested.store(true, ordering: .releasing)
        alarm.ring()
    }

    func loop() async {
        while !Task.isCancelled {
            await alarm.sleep(until: nil)
            if Task.isCancelled { return }
            if requested.exchange(false, ordering: .acquiringAndReleasing) {
                _ = await keeper.purgeDisk()
            }
        }
    }
}
