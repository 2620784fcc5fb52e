/// Remembers which conflicts (a path the agent may not write, and what sits there) have been reported, so
/// each is logged once, not once per poll or retry. A different object at the same path, or the same path
/// after the agent could write it again, is reported anew.
///
/// A plain value owned by whoever reports conflicts (the `AccessLog`, on the `SyncActor`).
struct ConflictLedger: Sendable {
    private var reported: [String: String] = [:]

    init() {}

    /// Records the conflict at `path` with `what` sits there; returns whether it is new (to be logged).
    mutating func note(path: String, occupant: String) -> Bool {
        guard reported[path] != occupant else { return false }
        reported[path] = occupant
        return true
    }

    /// The path is the agent's again (it wrote there, or found it free): a later conflict is news.
    mutating func clear(path: String) {
        reported[path] = nil
    }
}
