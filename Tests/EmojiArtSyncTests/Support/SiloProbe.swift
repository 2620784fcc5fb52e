@testable import EmojiArtSync
import Foundation

/// Whether the `SyncActor` silo is free while the calling thread is held: queues a job on the silo and blocks this
/// thread until that job has run (true) or `timeout` has passed (false). Called from a hook on a thread that does a
/// step of the agent's work (a link, a take), it tells whether that step holds the silo: when the step runs inside a
/// silo turn, the job can only run after it, and the wait ends in vain.
func siloRunsAJobMeanwhile(timeout: DispatchTimeInterval = .seconds(20)) -> Bool {
    let ran = DispatchSemaphore(value: 0)
    Task { @SyncActor in ran.signal() }
    return ran.wait(timeout: .now() + timeout) == .success
}
