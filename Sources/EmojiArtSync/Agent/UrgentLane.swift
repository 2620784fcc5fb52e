/// The lane that user-visible work takes past a pass: while it is open (a file the user deleted or damaged is
/// being checked or repaired), a pass waits before its next batch instead of queueing hundreds of accesses in
/// front of the repair on the silo. Lives in the silo; the pass asks it once per batch.
@SyncActor
final class UrgentLane {
    private var open = false
    private var waiting: [UInt64: CheckedContinuation<Void, Never>] = [:]
    private var nextWaiter: UInt64 = 0
    /// Whether urgent work is under way now.
    var isOpen: Bool { open }
    /// Times a pass waited for urgent work (tests, `status --json`).
    private(set) var passesHeldBack = 0

    nonisolated init() {}

    /// Opens or closes the lane; closing it lets the waiting passes go on.
    func set(open: Bool) {
        self.open = open
        guard !open else { return }
        let resumed = waiting.values
        waiting.removeAll()
        for continuation in resumed { continuation.resume() }
    }

    /// Returns at once when the lane is closed; otherwise once the urgent work is done, or as soon as the calling
    /// task is cancelled: a pass that is stopping does not wait. (Before, a pass held here when the agent was
    /// asked to stop, behind urgent checks the stopping watcher would never run, kept the agent from exiting.)
    func waitUntilClear() async {
        guard open, !Task.isCancelled else { return }
        passesHeldBack += 1
        let id = nextWaiter
        nextWaiter += 1
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                if Task.isCancelled { continuation.resume() } else { waiting[id] = continuation }
            }
        } onCancel: {
            // Runs after the continuation above was stored (that happened on this actor, before any hop to it).
            Task { @SyncActor in self.release(id) }
        }
    }

    private func release(_ id: UInt64) {
        waiting.removeValue(forKey: id)?.resume()
    }
}
