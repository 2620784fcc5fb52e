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
struct ForeignListings {
    /// The monitor the records come from (nil: none, and nothing here ever shuts the gate).
    var monitor: DirectoryListingMonitor?
    /// Since when a process holds DIR open, as the records say; nil when none does.
    private(set) var heldSince: ContinuousClock.Instant?
    /// When another process last opened or read DIR.
    private(set) var lastActivity: ContinuousClock.Instant?
    /// Until when a listing that may be `rm`'s keeps the gate shut.
    private(set) var uncertainUntil: ContinuousClock.Instant?
    /// When the current run of open-and-close records began, and when its last one came.
    private var runStart: ContinuousClock.Instant?
    private var runLast: ContinuousClock.Instant?
    /// Opens of DIR by other processes (and lost events) seen so far: each may begin a listing.
    private(set) var opens = 0

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
            opens += 1
            heldSince = nil
            uncertainUntil = now.advanced(by: RenameGate.burstQuiet)
            return
        }
        if record.contains(.opened) { opens += 1 }
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

    /// Whether a listing may have passed files linked since `opens` was `count`: another process opened DIR since,
    /// and one holds it open still, or its listing may be `rm`'s.
    func mayHavePassedFiles(linkedSince count: Int, now: ContinuousClock.Instant) -> Bool {
        opens != count && (heldSince != nil || (uncertainUntil.map { $0 > now } ?? false))
    }
}
