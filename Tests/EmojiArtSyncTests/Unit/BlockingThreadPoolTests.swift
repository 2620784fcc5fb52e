import Dispatch
@testable import EmojiArtSync
import Synchronization
import Testing

/// The blocking-I/O pool runs urgent work (a repair a person's change asked for) before the work queued ahead of
/// it (a cold sync's), each kind in order of submission; a task of `.high` priority asks for urgent work.
@Suite(.timeLimit(.minutes(1)))
struct BlockingThreadPoolTests {
    @Test func urgentWorkGoesBeforeWorkQueuedEarlier() {
        let pool = BlockingThreadPool(threads: 1, name: "test-io")
        let holding = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        let ran = DispatchSemaphore(value: 0)
        let order = Mutex<[String]>([])
        pool.submit {  // holds the pool's one thread while the rest is queued
            held.signal()
            holding.wait()
        }
        held.wait()
        for (name, urgent) in [("a", false), ("b", false), ("urgent", true), ("c", false), ("urgent 2", true)] {
            pool.submit(urgent: urgent) {
                order.withLock { $0.append(name) }
                ran.signal()
            }
        }
        holding.signal()
        for _ in 0..<5 { ran.wait() }
        #expect(order.withLock { $0 } == ["urgent", "urgent 2", "a", "b", "c"])
    }

    @Test func workAskedForByAHighPriorityTaskIsUrgent() async {
        let high = await Task(priority: .high) { BlockingIO.isUrgent }.value
        let low = await Task(priority: .low) { BlockingIO.isUrgent }.value
        #expect(high)
        #expect(!low)
    }
}
