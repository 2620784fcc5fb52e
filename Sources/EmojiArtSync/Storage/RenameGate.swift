import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Holds the agent's renames into DIR while DIR is being emptied, and shuts for good once DIR or its state
/// directory is gone: what keeps a repair from putting a file back into a folder `rm -rf` is removing.
///
/// `rm -rf DIR` deletes DIR's entries microseconds apart, then the state directory, then DIR. Every rename
/// into DIR waits here (`GroupCommitter`, before each batch's renames), so every repair, whoever asked for it
/// (the watcher, a rescan, a retry, the scrub), passes the gate. A repair the watcher starts also names its
/// temporary file only once the gate is open (a name created in the state directory while `rm` is inside it makes
/// `rm` fail): its check and fetch start at once, and a body that fits `StreamedBodyFile`'s buffer is written and
/// flushed meanwhile into a file with no name (`O_TMPFILE`), which is linked into DIR once the gate opens
/// (`AssetFetcher.fetchAndStage(_:in:validators:priority:gate:)`, `TemporaryFileGate`); a pass's small body goes to
/// a file with no name too, or waits in its buffer when the ration of those is used up. A lone deletion therefore
/// costs `loneQuiet` or the fetch and flush, whichever is longer, then a link; a cold sync's thousands of
/// renames and links cost nothing.
///
/// Only deletions of DIR's entries (`IN_DELETE`, `IN_MOVED_FROM`) count, never what the agent does itself: its
/// renames into DIR are arrivals, not deletions, and the names the `OwnershipGuard` takes out of DIR are
/// announced first (`expectOwnRemoval`), so their events are skipped. The renames into DIR are announced too
/// (`expectOwnArrival`), and ``note(_:)`` leaves their `IN_MOVED_TO` (a rename) or `IN_CREATE` (a link of a file
/// with no name) out of what the watcher acts on: a file the
/// agent has just put in place needs no check (a cold sync's 90,000 renames were each checked again, as urgent as
/// a person's change, and held the repairs of real deletions back). The quiet the gate waits for adapts to
/// the burst: `loneQuiet` after a deletion with no other one just before it, `burstQuiet` after each deletion
/// of a burst (a pause of `rm` on a busy machine is far shorter). The watcher feeds it on the thread that
/// reads inotify, as each batch is read (`DirectoryWatcher`'s `sifting`), not from a task: the cooperative pool
/// busy with a sync's jobs, or a repair that keeps the acting task busy, never hides a deletion from the gate. Without a watcher (`--once`) it is always open.
///
/// Deletions come too late for one case: `rm -rf DIR` opens DIR and lists it (all of it, up to 100,000 entries) before
/// it deletes anything, and a file linked after that listing passed its place is never seen by `rm`, whose last
/// `rmdir` then fails with "Directory not empty". So the gate also hears, from a `DirectoryListingMonitor`, when
/// another process opens, lists or closes DIR itself, and stays shut while another process holds DIR open (as `rm`
/// does from its listing to its last deletion) and has listed or deleted something in the last `listingHoldLimit`
/// (2 s; 30 s at most from its open, `listingHoldCap`), or briefly while a listing may be `rm`'s; a program polling
/// DIR's listing every few milliseconds must not starve the agent (`ForeignListings` says how the kernel's records
/// are read). A listing that begins while the committer links a turn's files may have passed some of them: the committer reads
/// `listingMark` (opens of DIR and deletions from it by other processes) before the turn and asks
/// ``listingMayHavePassedFiles(linkedSince:)`` after it, and takes that turn's new files back to link them again once
/// the gate opens (`GroupCommitter`): a listing begins with an open, whose event is queued before `open` returns, so
/// one that began after that mark sees every file linked before; and `rm` deletes right after its listing, so a
/// listing read just before the turn (as a poller's, which no longer shuts the gate) is caught by its deletions.
final class RenameGate: Sendable {
    /// The quiet after a deletion that came alone: the time for the next deletion of a burst to be seen.
    static let loneQuiet = Duration.milliseconds(5)
    /// The quiet after each deletion of a burst: spans `rm`'s pauses between entries (and between DIR's last
    /// file and the state directory) on a loaded machine.
    static let burstQuiet = Duration.milliseconds(50)
    /// Two deletions this close together are a burst.
    static let burstGap = Duration.milliseconds(10)
    /// How long an announced removal waits for its event before it is forgotten.
    static let expectationLifetime = Duration.seconds(5)
    /// Another process holding DIR open keeps the gate shut until it has neither listed DIR nor deleted from it for
    /// this long: `rm -rf` holds it from its listing to its last deletion, while a program that merely keeps DIR
    /// open (or whose close was lost) never holds the agent back for longer.
    static let defaultListingHoldLimit = Duration.seconds(2)
    /// However busy, holders keep the gate shut for this long at most from when the first of them opened DIR: a
    /// program that keeps DIR open and lists it every second never stops the agent for good. `rm -rf` of a million
    /// files takes longer, but its deletions keep the gate shut by themselves.
    static let listingHoldCap = Duration.seconds(30)
    /// How often a waiter looks again while another process holds DIR open.
    static let holderRecheck = Duration.milliseconds(5)

    private struct State {
        var lastDeletion: ContinuousClock.Instant?
        var shutUntil: ContinuousClock.Instant?
        var gone: String?
        var watching = false
        /// Names the agent is taking out of DIR itself, with when it said so.
        var expectedRemovals: [String: [ContinuousClock.Instant]] = [:]
        /// Names the agent is renaming into DIR itself, with when it said so.
        var expectedArrivals: [String: [ContinuousClock.Instant]] = [:]
        /// Tasks in `waitUntilOpen` now.
        var waiters = 0
        /// Times `waitUntilOpen` looked at the gate, since it was made.
        var looks = 0
        /// Shut by a test (`holdShut`), whatever DIR does.
        var heldByTest = false
        /// Other processes' listings of DIR (no monitor: no watcher, or fanotify is not available).
        var listings = ForeignListings()
    }

    private let state = Mutex(State())
    /// Files of the state directory the agent never deletes (its lock, its index): one missing means `rm -rf`
    /// is inside the state directory, where the watcher on DIR sees nothing.
    private let stateProbes: [String]

    /// How long another process holding DIR open keeps the gate shut after it last listed or deleted there
    /// (`defaultListingHoldLimit`; a test sets a longer one so a slow machine cannot open the gate under it).
    let listingHoldLimit: Duration

    init(stateProbes: [String] = [], listingHoldLimit: Duration = RenameGate.defaultListingHoldLimit) {
        self.stateProbes = stateProbes
        self.listingHoldLimit = listingHoldLimit
    }

    /// A watcher feeds the gate from now on (the agent's own removals are announced only then), and `listings`,
    /// when there is one, tells it who else opens and lists DIR.
    func startWatching(listings: DirectoryListingMonitor? = nil) {
        state.withLock {
            $0.watching = true
            $0.listings.monitor = listings
        }
    }

    /// DIR or its state directory is gone: nothing is ever renamed into DIR again. `why` says what happened.
    func shutForGood(_ why: String) {
        state.withLock { $0.gone = $0.gone ?? why }
    }

    /// The agent is about to take `name` out of DIR (a removal, a replacement): its deletion event is its own.
    func expectOwnRemoval(of name: String) {
        expect(name, in: \.expectedRemovals)
    }

    /// The removal announced for `name` did not happen (its rename failed): no event will come.
    func cancelOwnRemoval(of name: String) {
        cancel(name, in: \.expectedRemovals)
    }

    /// The agent is about to rename a file of its own into DIR as `name`: its arrival event is its own.
    func expectOwnArrival(of name: String) {
        expect(name, in: \.expectedArrivals)
    }

    /// The arrival announced for `name` did not happen (its rename failed): no event will come.
    func cancelOwnArrival(of name: String) {
        cancel(name, in: \.expectedArrivals)
    }

    private func expect(_ name: String, in expectations: WritableKeyPath<State, [String: [ContinuousClock.Instant]]>) {
        let now = ContinuousClock.now
        state.withLock { state in
            guard state.watching else { return }
            state[keyPath: expectations][name, default: []].append(now)
        }
    }

    private func cancel(_ name: String, in expectations: WritableKeyPath<State, [String: [ContinuousClock.Instant]]>) {
        state.withLock { state in
            guard var times = state[keyPath: expectations][name], !times.isEmpty else { return }
            times.removeLast()
            state[keyPath: expectations][name] = times.isEmpty ? nil : times
        }
    }

    /// Takes a batch of the watcher's events, as they are read, and returns the events to act on: all of them but
    /// the arrivals the agent announced (its own renames into DIR).
    @discardableResult
    func note(_ batch: [WatchEvent]) -> [WatchEvent] {
        let now = ContinuousClock.now
        return state.withLock { state in
            var personal: [WatchEvent] = []
            personal.reserveCapacity(batch.count)
            for event in batch {
                if event.endsWatch {
                    state.gone = state.gone ?? "DIR is gone"
                } else if WatchBacklog.touchesStateDirectory(event) {
                    state.gone = state.gone ?? "the state directory is gone"
                } else if event.mask.contains(.queueOverflow) {
                    // Events were lost: announcements whose events will never come must not swallow later ones.
                    state.expectedArrivals.removeAll()
                    state.expectedRemovals.removeAll()
                } else if let name = event.name {
                    if !event.mask.isDisjoint(with: [.movedTo, .create]),
                        Self.consumeExpectation(of: name, in: &state.expectedArrivals, now: now)
                    {
                        continue
                    }
                    if !event.mask.isDisjoint(with: [.delete, .movedFrom]),
                        !Self.consumeExpectation(of: name, in: &state.expectedRemovals, now: now)
                    {
                        let burst = state.lastDeletion.map { now - $0 < Self.burstGap } ?? false
                        state.lastDeletion = now
                        state.shutUntil = now.advanced(by: burst ? Self.burstQuiet : Self.loneQuiet)
                    }
                }
                personal.append(event)
            }
            return personal
        }
    }

    private static func consumeExpectation(
        of name: String, in expected: inout [String: [ContinuousClock.Instant]], now: ContinuousClock.Instant
    ) -> Bool {
        guard var times = expected[name] else { return false }
        times.removeAll { now - $0 > expectationLifetime }
        guard !times.isEmpty else {
            expected[name] = nil
            return false
        }
        times.removeFirst()
        expected[name] = times.isEmpty ? nil : times
        return true
    }

    /// Opens of DIR and deletions from it by other processes seen so far, without looking for new ones: what the
    /// committer reads before a turn's links (``listingMayHavePassedFiles(linkedSince:)`` after them).
    var listingMark: ForeignListings.Mark { state.withLock { $0.listings.mark } }

    /// Whether a listing of DIR by another process may have passed files linked since ``listingMark`` said `mark`,
    /// after taking in what is queued now (one read of the monitor): another process opened DIR, or deleted from
    /// it, since. When none did, any listing still to come sees those files. An open and a close read together
    /// do not say the listing is over (`rm -rf` closes DIR after a first look and opens it again, and the kernel
    /// merges the two), and a deletion right after a listing read at the turn's start says it was `rm`'s.
    func listingMayHavePassedFiles(linkedSince mark: ForeignListings.Mark) -> Bool {
        state.withLock { state in
            state.listings.drain(now: .now)
            return state.listings.mayHavePassedFiles(linkedSince: mark)
        }
    }

    /// Whether another program's listings of DIR come as a poller's now, which no longer shut the gate, after taking
    /// in what is queued; for tests.
    var seesAListingPoller: Bool {
        let now = ContinuousClock.now
        return state.withLock { state in
            state.listings.drain(now: now)
            return state.listings.seesAPoller(now: now)
        }
    }

    /// Until when renames wait now (nil: not shut by a deletion so far); for tests.
    var shutUntil: ContinuousClock.Instant? { state.withLock { $0.shutUntil } }

    /// Whether DIR or its state directory is gone: nothing is renamed into DIR any more.
    var isShutForGood: Bool { state.withLock { $0.gone != nil } }

    /// How many tasks wait for the gate now; for tests.
    var waiters: Int { state.withLock { $0.waiters } }

    /// How many times the waiters looked at the gate so far (once, then once per sleep); for tests.
    var looks: Int { state.withLock { $0.looks } }

    /// Keeps the gate shut, as a deletion would, until the test lets go: what a repair does meanwhile can be looked
    /// at without racing a clock.
    func holdShut(_ held: Bool) {
        state.withLock { $0.heldByTest = held }
    }

    /// Whether the gate is open now (nil), else how long to wait before looking again, or why DIR is gone. One
    /// look, no waiting: what a transfer's write callback may ask before it makes a file. A state file found
    /// deleted shuts the gate for good and is reported once (`whenStateFileDeleted`).
    private func look() -> Verdict {
        let now = ContinuousClock.now
        state.withLock { $0.listings.drain(now: now) }
        let verdict = lookInMemory()
        guard case .open = verdict, state.withLock({ $0.watching }) else { return verdict }
        if let missing = stateProbes.first(where: { access($0, F_OK) != 0 && errno == ENOENT }) {
            let first = state.withLock { state in
                defer { state.gone = state.gone ?? "\(missing) was deleted" }
                return state.gone == nil
            }
            if first { stateFileDeleted.withLock { $0 }?(missing) }
            return .gone("\(missing) was deleted")
        }
        return .open
    }

    /// `look()` without the state files' probes (no system call): what the deletions seen and a fatal error say.
    private func lookInMemory() -> Verdict {
        let now = ContinuousClock.now
        return state.withLock { state in
            if let gone = state.gone { return .gone(gone) }
            if state.heldByTest { return .shut(until: now.advanced(by: .milliseconds(2))) }
            if let until = state.shutUntil, until > now { return .shut(until: until) }
            if let until = state.listings.shutUntil(now: now, lastDeletion: state.lastDeletion, holdLimit: listingHoldLimit) {
                return .shut(until: until)
            }
            return .open
        }
    }

    /// Whether a rename may happen now as far as the deletions seen so far say: one look at memory, for the committer
    /// before each rename of a turn the gate admitted (`waitUntilOpen` looked at the state files when it began).
    var admitsRenameNow: Bool {
        if case .open = lookInMemory() { return true }
        return false
    }

    /// Called once, with the path, when a look finds a file of the state directory deleted (`rm -rf DIR` inside the
    /// state directory, where the watcher on DIR sees nothing): the agent stops, as when the state directory goes.
    func whenStateFileDeleted(_ handler: @escaping @Sendable (String) -> Void) {
        stateFileDeleted.withLock { $0 = handler }
    }

    private let stateFileDeleted = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// What one look at the gate says.
    enum Verdict: Sendable {
        case open
        /// Look again at this instant.
        case shut(until: ContinuousClock.Instant)
        /// DIR or its state directory is gone: why.
        case gone(String)
    }

    /// One look at the gate (memory and the state files), no waiting: what the committer asks on the I/O pool
    /// before a turn's links.
    func lookOnce() -> Verdict { look() }

    /// Whether a rename into DIR (or a new file in its state directory) may happen now, without waiting.
    var isOpen: Bool {
        if case .open = look() { return true }
        return false
    }

    /// Returns once DIR has been quiet long enough (nil), or at once with why DIR is gone. A cancelled caller
    /// (the agent stopping) waits too, without spinning: what it was about to make could still trip `rm`.
    func waitUntilOpen(isolation: isolated (any Actor)? = #isolation) async -> String? {
        state.withLock { $0.waiters += 1 }
        defer { state.withLock { $0.waiters -= 1 } }
        while true {
            state.withLock { $0.looks += 1 }
            switch look() {
            case .open:
                return nil
            case .gone(let why):
                return why
            case .shut(let until):
                if Task.isCancelled {
                    // A cancelled task's sleep returns at once; a task of its own is not cancelled with it.
                    await Task { try? await Task.sleep(until: until, clock: .continuous) }.value
                } else {
                    try? await Task.sleep(until: until, clock: .continuous)
                }
            }
        }
    }
}
