import Synchronization

/// Where the schedule service is: asleep until a deadline (`until` nil: until something rings), or awake (nil).
/// What a test checks instead of watching a clock: an idle agent sleeps until its next poll, nothing due in
/// between.
///
/// Lock: the schedule service writes it, any thread reads it.
final class SchedulerSleepRecord: Sendable {
    private let sleep = Mutex<BackgroundAgent.SchedulerSleep?>(nil)

    var current: BackgroundAgent.SchedulerSleep? { sleep.withLock { $0 } }

    func set(_ new: BackgroundAgent.SchedulerSleep?) {
        sleep.withLock { $0 = new }
    }
}
