/// Counts the scheduler's passes over due work (`MirrorKeeper.runDueWork`), so that a caller can wait for
/// the first pass that begins after its request: how a reload (`SIGHUP`) learns that the feed was re-read and
/// DIR rescanned, and only then tells systemd `READY=1` (`systemctl reload` returns when the reload is done).
///
/// On the `SyncActor` with the keeper whose passes it counts: a pass begins and ends there, and a ticket
/// taken there names a pass that has not begun yet.
@SyncActor
final class PassCounter {
    private var begun = 0
    private var ended = 0
    private var waiters: [Int: (pass: Int, continuation: CheckedContinuation<Void, Never>)] = [:]
    private var nextWaiter = 0

    /// The pass that will carry out a request recorded now: the next one to begin.
    var nextPass: Int { begun + 1 }
    /// Whether a pass runs now (passes never overlap: one scheduler runs them).
    var isRunning: Bool { begun > ended }

    func begin() { begun += 1 }

    func end() {
        ended += 1
        for (id, waiter) in waiters where waiter.pass <= ended {
            waiters[id] = nil
            waiter.continuation.resume()
        }
    }

    /// Returns once pass number `pass` has ended, or as soon as the calling task is cancelled.
    func waitUntilEnded(_ pass: Int) async {
        let id = nextWaiter
        nextWaiter += 1
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if ended >= pass || Task.isCancelled {
                    continuation.resume()
                } else {
                    waiters[id] = (pass, continuation)
                }
            }
        } onCancel: {
            // Runs after the continuation above was stored (that happened on this actor, before any hop to it).
            Task { @SyncActor in self.release(id) }
        }
    }

    private func release(_ id: Int) {
        waiters.removeValue(forKey: id)?.continuation.resume()
    }
}
