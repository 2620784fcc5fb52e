/// The lane that user-visible work takes past a pass: while it is open (a file the user deleted or damaged is
/// being checked or repaired), a pass waits before its next batch instead of queueing hundreds of accesses in
/// front of the repair on the silo. Lives in the silo; the pass asks it once per batch.
@SyncActor
final class UrgentLane {
    private var open = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    /// Whether urgent work is under way now.
    var isOpen: Bool { open }
    /// Times a pass waited for urgent work (tests, `status --json`).
    private(set) var passesHeldBack = 0

    nonisolated init() {}

    /// Opens or closes the lane; closing it lets the waiting passes go on.
    func set(open: Bool) {
        self.open = open
        guard !open else { return }
        let resumed = waiting
        waiting.removeAll()
        for continuation in resumed { continuation.resume() }
    }

    /// Returns at once when the lane is closed; otherwise once the urgent work is done.
    func waitUntilClear() async {
        guard open else { return }
        passesHeldBack += 1
        await withCheckedContinuation { waiting.append($0) }
    }
}
