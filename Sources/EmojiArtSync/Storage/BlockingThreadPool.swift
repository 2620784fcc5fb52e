import DequeModule
import Dispatch
import Foundation
import Synchronization

/// A fixed set of threads that run submitted closures in order of submission, for work that blocks (disk I/O)
/// and must not run on Swift's cooperative pool. The threads start with the pool and live as long as the
/// process: the agent's one pool is a lazily made static (``BlockingIO``).
///
/// The queue is behind a `Mutex`; a semaphore counts what is queued, so an idle worker sleeps in the kernel.
final class BlockingThreadPool: Sendable {
    private let queue = Mutex(Deque<@Sendable () -> Void>())
    private let queued = DispatchSemaphore(value: 0)

    init(threads: Int, name: String) {
        for index in 0..<threads {
            let thread = Thread { [self] in
                // Named from inside: set before `start()`, the name does not reach the kernel on Linux.
                Thread.current.name = "\(name)-\(index)"
                workLoop()
            }
            thread.start()
        }
    }

    /// Queues `work`; one of the pool's threads runs it soon.
    func submit(_ work: @escaping @Sendable () -> Void) {
        queue.withLock { $0.append(work) }
        queued.signal()
    }

    private func workLoop() {
        while true {
            queued.wait()
            if let work = queue.withLock({ $0.popFirst() }) {
                work()
            }
        }
    }
}
