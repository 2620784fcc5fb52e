/// What the rename gate knows of other processes' listings of DIR, from the records of a `DirectoryListingMonitor`,
/// and the rules it draws from them. A value inside `RenameGate`'s lock.
///
/// The kernel merges a process's events on DIR while they wait to be read, so a record says what happened, not in
/// which order. Three kinds of record are told apart:
/// - an open without a close, or reads without an open or a close: a process holds DIR open (`rm -rf` from its
///   listing to its last deletion: its events read one drain apart are an open, then reads, then, at its very end,
///   a close): the gate stays shut while it holds DIR and works in it (`holdLimit` since its last read or the last
///   deletion; `holdCap` in all);
/// - a close without an open: it closed DIR;
/// - an open and a close in one record: a listing that is over (`ls`), or `rm` closing DIR after its first look and
///   opening it again, merged. That cannot be told apart, so the gate stays shut for `RenameGate.burstQuiet`, long
///   enough for `rm`'s next reads (or its deletions) to be seen; but a run of such records longer than `pollerRun`
///   (a program that polls DIR's listing, or `watch ls`) stops counting until they pause for `pollerPause`: a
///   program that lists DIR all the time must not keep the agent from writing a file.
/// A record that also holds a deletion of DIR's entries is a process that lists DIR and deletes from it, as `rm -rf`,
/// never a poller: it holds DIR, or, when the record closed DIR too, may still hold it.
///
/// Whether a turn's links were passed by a listing is decided apart from the gate (`mayHavePassedFiles`): any open of
/// DIR by another process during the turn, a poller's too (an open and a close merged in one record do not say the
/// close came last: `rm` closes DIR after its first look and opens it again), and any deletion of DIR's entries by
/// another process during the turn within `deletionAfterListing` of an open (`rm` deletes right after its listing,
/// which a drain just before the turn may have read as a poller's; a person deleting a file lists nothing, and takes
/// no turn back). Taking a turn back costs its links again; leaving one in DIR fails `rm -rf`.
struct ForeignListings {
    /// What the records said so far, to compare with later (`mayHavePassedFiles`).
    struct Mark: Equatable, Sendable {
        /// Opens of DIR by other processes (and lost events): each may begin a listing.
        var opens = 0
        /// Records with deletions of DIR's entries by other processes right after a listing (and lost events).
        var deletions = 0
    }

    /// The monitor the records come from (nil: none, and nothing here ever shuts the gate).
    var monitor: DirectoryListingMonitor?
    /// Since when a process holds DIR open, as the records say; nil when none does.
    private(set) var heldSince: ContinuousClock.Instant?
    /// When another process last opened or read DIR.
    private(set) var lastActivity: ContinuousClock.Instant?
    /// When another process last opened DIR.
    private var lastOpen: ContinuousClock.Instant?
    /// Until when a listing that may be `rm`'s keeps the gate shut.
    private(set) var uncertainUntil: ContinuousClock.Instant?
    /// When the current run of open-and-close records began, and when its last one came.
    private var runStart: ContinuousClock.Instant?
    private var runLast: ContinuousClock.Instant?
    /// Opens and deletions seen so far.
    private(set) var mark = Mark()

    /// How soon after another process opened DIR a deletion by another process still takes a turn back: `rm`'s
    /// first deletion follows its listing at once, but on a loaded machine the drains that read the two may be far
    /// apart (a turn of 64 links can take longer than 50 ms there).
    static let deletionAfterListing = RenameGate.defaultListingHoldLimit

    /// How long open-and-close records may keep coming before they stop shutting the gate.
    static let pollerRun = Duration.milliseconds(500)
    /// The pause that ends such a run.
    static let pollerPause = Duration.seconds(1)

    /// Takes in what the monitor has queued now.
    mutating func drain(now: ContinuousClock.Instant) {
        guard let records = monitor?.drain(), !records.isEmpty else { return }
        for record in records { take(record, now: now) }
    }

    /// Takes in one record.
    mutating func take(_ record: DirectoryListingMonitor.Record, now: ContinuousClock.Instant) {
        if record.contains(.overflowed) {
            // Unknown: who holds DIR now, and whether a listing began; as uncertain as an open and a close.
            mark.opens += 1
            mark.deletions += 1
            heldSince = nil
            uncertainUntil = now.advanced(by: RenameGate.burstQuiet)
            return
        }
        if record.contains(.opened) {
            mark.opens += 1
            lastOpen = now
        }
        if record.contains(.deleted) {
            if let lastOpen, now - lastOpen <= Self.deletionAfterListing { mark.deletions += 1 }
            // Listed and deleted: `rm -rf` at work, never a poller. It holds DIR still unless the record closed it
            // too, when that close may have been its last: uncertain then, as a listing that may be `rm`'s.
            if !record.isDisjoint(with: [.opened, .read]) {
                lastActivity = now
                if record.contains(.closed) {
                    uncertainUntil = now.advanced(by: RenameGate.burstQuiet)
                } else {
                    heldSince = heldSince ?? now
                }
                return
            }
        }
        if !record.isDisjoint(with: [.opened, .read]) { lastActivity = now }
        switch (record.contains(.opened), record.contains(.closed)) {
        case (true, true):
            // Whoever else holds DIR open (records do not always tell processes apart) still does.
            if runLast.map({ now - $0 > Self.pollerPause }) ?? true { runStart = now }
            runLast = now
            if let runStart, now - runStart < Self.pollerRun { uncertainUntil = now.advanced(by: RenameGate.burstQuiet) }
        case (true, false):
            heldSince = heldSince ?? now
        case (false, true):
            heldSince = nil
        case (false, false):
            if record.contains(.read) { heldSince = heldSince ?? now }
        }
    }

    /// Until when the gate stays shut for other processes' listings (nil: it need not), given the last deletion
    /// of DIR's entries and the hold limit.
    func shutUntil(now: ContinuousClock.Instant, lastDeletion: ContinuousClock.Instant?, holdLimit: Duration) -> ContinuousClock.Instant? {
        if let since = heldSince, let listed = lastActivity {
            let active = max(listed, lastDeletion ?? listed)
            if now - active < holdLimit, now - since < max(holdLimit, RenameGate.listingHoldCap) {
                return now.advanced(by: RenameGate.holderRecheck)
            }
        }
        if let until = uncertainUntil, until > now { return until }
        return nil
    }

    /// Whether open-and-close records come as a poller's now (past `pollerRun`: they no longer shut the gate); for
    /// tests.
    func seesAPoller(now: ContinuousClock.Instant) -> Bool {
        guard let runStart, let runLast else { return false }
        return now - runStart >= Self.pollerRun && now - runLast <= Self.pollerPause
    }

    /// Whether a listing may have passed files linked since the records said `mark`: another process opened DIR or
    /// deleted from it since (see the type).
    func mayHavePassedFiles(linkedSince mark: Mark) -> Bool {
        self.mark != mark
    }
}
