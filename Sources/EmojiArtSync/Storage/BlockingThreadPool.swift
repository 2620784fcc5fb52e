import DequeModule
import Dispatch
import POSIXThreads
import Synchronization

/// A fixed set of threads that run submitted closures, for work that blocks (disk I/O) and must not run on Swift's
/// cooperative pool: urgent work first (a repair a person's change asked for), then the rest, each in order of
/// submission. The threads start with the pool and live as long as the process: the agent's one pool is a lazily
/// made static (``BlockingIO``).
///
/// The queues are behind a `Mutex`; a semaphore counts what is queued, so an idle worker sleeps in the kernel.
final class BlockingThreadPool: Sendable {
    private struct Queues {
        var urgent = Deque<@Sendable () -> Void>()
        var normal = Deque<@Sendable () -> Void>()
    }

    private let queues = Mutex(Queues())
    private let queued = DispatchSemaphore(value: 0)

    /// Starts `threads` threads named `name-0`, `name-1`, ... (what `top -H` shows). A pool that could start
    /// some of them works with those; one that could start none stops the process, naming why: without it no
    /// file would ever be written.
    init(threads: Int, name: String) {
        var started = 0
        var failure: JoinableThread.StartFailure?
        for index in 0..<threads {
            do {
                try JoinableThread.startDetached(name: "\(name)-\(index)") { [self] in workLoop() }
                started += 1
            } catch {
                failure = error
            }
        }
        precondition(started > 0, "the blocking I/O pool has no thread: \(failure.map(String.init(describing:)) ?? "none asked for")")
    }

    /// Queues `work`; one of the pool's threads runs it soon. `urgent` work goes before all work that is not,
    /// however long that queue is (a cold sync keeps hundreds of files' work queued here).
    func submit(urgent: Bool = false, _ work: @escaping @Sendable () -> Void) {
        queues.withLock { queues in
            if urgent { queues.urgent.append(work) } else { queues.normal.append(work) }
        }
        queued.signal()
    }

    private func workLoop() {
        while true {
            queued.wait()
            if let work = queues.withLock({ $0.urgent.popFirst() ?? $0.normal.popFirst() }) {
                work()
            }
        }
    }
}
