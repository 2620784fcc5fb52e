import CurlHTTP
import Logging

/// The background agent's check-and-repair queue: which files wait for a check (the names a person changed, the
/// rescan's place in the index), which keys are being fetched again, and the names seen changed meanwhile. What
/// inotify events, rescans, retries, scrubs, purges and the keeper's polls lead to all ends here, so one type
/// keeps the promises the repairs rely on:
/// - a key is fetched again by at most one repair or refresh at a time (`repairing`);
/// - checks coalesce and none is lost: each call of `checkPending` takes the names queued when it looks (the
///   scheduler's loop is not reentrant and takes the names queued meanwhile at its next batch; the watcher's calls
///   run side by side, so one person's change never waits for the repair of the one before), and a name seen
///   changed while its key is being repaired is checked again once that repair is done (`checksAfterRepair`);
/// - a person's changes are checked first, with the `UrgentLane` open, so a repair never waits behind a pass;
/// - the rescan goes a page at a time (the feed's keys against the digests the catalogue keeps, then the rows of
///   keys gone from the feed), and never on the watcher's path (`urgentOnly`).
///
/// Lives in the `SyncActor` silo with the mirror's parts it drives; after every `await` it reads its state again.
/// Rings the scheduler's alarm when its work changed what is due (`MirrorKeeper.runDueWork` recomputes then).
@SyncActor
final class RepairQueue {
    private let core: MirrorCore
    private let window: Int
    private let errors: WorkErrors
    /// The scheduler's alarm and passes: rung when a repair changed the next deadline while no pass runs.
    private let alarm: Alarm
    private let passes: PassCounter

    /// A rescan in progress, nil when none is due. Only files whose `lstat` differs from what their row records
    /// are checked; a rescan asked for while one runs starts it over.
    private var rescanCursor: RescanCursor?

    /// Where a rescan goes on, a page at a time.
    private enum RescanCursor {
        /// At a position of the feed of `version`: its stored keys are compared with the fingerprint digests the
        /// catalogue keeps (no query and no `String` a file; the `fstatat`s by each key's own bytes, off the silo).
        case feed(version: UInt64, next: Int)
        /// After the feed's keys, the rows of keys the feed no longer lists (gone, their removal refused or not
        /// yet run), after `after`'s, checked one by one.
        case gone(after: AssetKey?)
        /// Among the index's rows, after the file name `after`: every row, when the catalogue holds no digests (no
        /// feed walked yet) or the feed was replaced during the rescan.
        case index(after: String)
    }
    /// Files a person changed (inotify): checked before anything else, with the urgent lane open.
    private var urgentChecks: Set<String> = []
    /// Rounds of urgent checks whose repairs still run: the lane stays open for them.
    private var urgentRepairs = 0
    /// Names seen changed while their key was being repaired: checked again once that repair is done.
    private var checksAfterRepair: Set<String> = []
    /// Whether `checkPending` runs now.
    private var checking = false
    /// Keys being fetched again (a repair, a refresh, a retry, a purge's refetch).
    private var repairing: Set<AssetKey> = []

    /// Files the index holds per rescan page: one query on the silo, the `lstat`s off it.
    static let rescanPage = 1024

    init(core: MirrorCore, window: Int, errors: WorkErrors, alarm: Alarm, passes: PassCounter) {
        self.core = core
        self.window = window
        self.errors = errors
        self.alarm = alarm
        self.passes = passes
    }

    // MARK: - Asking for checks

    /// Queues files for a check (names from inotify events: a person changed them, so they go first, ahead of
    /// the next batch of any pass); `checkPending()` processes them.
    func noteChanged(fileNames: some Sequence<String>) {
        urgentChecks.formUnion(fileNames)
        updateUrgentLane()
    }

    /// Queues every owned file for a check (inotify overflow, `SIGHUP`, the fallback timer, DIR recreated): a
    /// rescan, from the first name; one under way starts over.
    func rescanAll() {
        rescanCursor = .feed(version: core.catalogue.version, next: 0)
    }

    var hasPendingChecks: Bool { rescanCursor != nil || !urgentChecks.isEmpty }

    // MARK: - Checking

    /// Checks queued files and repairs the agent's damaged ones. The scheduler's calls are not re-entrant (one
    /// returns at once while another runs: the running loop takes urgent names first at its next batch, so a
    /// burst of events costs a few passes, not one per event); between batches of a rescan the loop lets other
    /// work of the silo run (a person's change being queued).
    ///
    /// `urgentOnly` (the watcher): only the changes a person made, never the rescan backlog, which the scheduler
    /// works through (a watcher that took on the rescan that every `SIGHUP` queues stopped reading inotify for
    /// as long as `SIGHUP`s kept coming: repairs waited up to 30 s at 30,000 assets). Each such call takes every
    /// name queued when it looks, beside any other call: a deletion is checked and repaired while the repair of the
    /// one before it still runs.
    func checkPending(urgentOnly: Bool = false) async {
        if urgentOnly {
            // Not behind the running loop: that one may be waiting for a repair (its fetch, its commit, DIR's
            // `fsync` under a cold sync's writes), and a second deletion must not wait for the first's repair.
            while !urgentChecks.isEmpty {
                let names = urgentChecks.sorted()
                urgentChecks.removeAll()
                await check(names, urgent: true)
                if Task.isCancelled { return }
            }
            if rescanCursor != nil, !checking { alarm.ring() }  // the rescan left is the scheduler's
            return
        }
        guard !checking else { return }
        checking = true
        defer { checking = false }
        while let (names, urgent) = await nextChecks() {
            await check(names, urgent: urgent)
            if Task.isCancelled { return }
            if !urgent { await Task.yield() }
        }
    }

    /// Checks the files `names` and repairs the agent's damaged ones among them; `urgent`: a person's change.
    private func check(_ names: [String], urgent: Bool) async {
        if urgent { urgentRepairs += 1 }
        var missing: [AssetKey] = []
        var corrupt: [AssetKey] = []
        // The owned files among the names, looked at together (one job off the silo, one transaction: a rescan
        // after `chmod -R` or `touch` of DIR finds every file changed).
        var files: [(entry: IndexEntry, key: AssetKey)] = []
        for name in names {
            do {
                guard let file = try core.owned.file(named: name) else { continue }
                if repairing.contains(file.key) {
                    checksAfterRepair.insert(name)
                    continue
                }
                files.append(file)
            } catch {
                // Checked again by the next poll's rescan, or the next event for the file.
                errors.report(error, while: "checking \(name)")
            }
        }
        // Stopping: the next start checks everything anyway.
        let verdicts = Task.isCancelled ? [] : await core.inspector.check(files)
        for (file, verdict) in zip(files, verdicts) {
            switch verdict {
            case .success(.damaged(.missing)): missing.append(file.key)
            case .success(.damaged(.corrupt)): corrupt.append(file.key)
            case .success(.trusted), .success(.verified), .success(.changedMeanwhile): break
            case .failure(let error): errors.report(error, while: "checking \(file.entry.name)")
            }
        }
        let priority: RequestPriority = urgent ? .urgent : .normal
        async let missingDone: Void = refetch(missing, reason: .missing, priority: priority)
        async let corruptDone: Void = refetch(corrupt, reason: .corrupt, priority: priority)
        _ = await (missingDone, corruptDone)
        if urgent { urgentRepairs -= 1 }
        updateUrgentLane()
    }

    /// The next checks to run: every urgent one, else the files of the rescan's next page whose `lstat` is not
    /// the one their row records (the rest are intact: `check` would find the same with a lookup and two `lstat`s
    /// each, on the silo). Nil when there is nothing left to check.
    private func nextChecks() async -> (names: [String], urgent: Bool)? {
        if !urgentChecks.isEmpty {
            let names = urgentChecks.sorted()
            urgentChecks.removeAll()
            return (names, true)
        }
        while let cursor = rescanCursor {
            switch cursor {
            case .feed(let version, let next):
                guard let page = core.catalogue.recordedFiles(from: next, limit: Self.rescanPage, version: version) else {
                    rescanCursor = .index(after: "")
                    continue
                }
                // Set before the await: a rescan asked for meanwhile starts over from the first position.
                rescanCursor = page.isLast ? .gone(after: nil) : .feed(version: version, next: next + Self.rescanPage)
                return (await Self.changed(page.files, in: core.storage.descriptor), false)
            case .gone(let after):
                let gone: [AssetKey]
                do {
                    gone = try core.catalogue.current().gone
                } catch {
                    rescanCursor = nil  // the next poll, overflow or SIGHUP rescans again
                    errors.report(error, while: "listing the agent's files for a rescan")
                    return nil
                }
                let page = gone.drop { after != nil && $0 <= after! }.prefix(Self.rescanPage)
                rescanCursor = page.count < Self.rescanPage ? nil : .gone(after: page.last)
                if page.isEmpty { continue }
                return (page.map(\.fileName), false)
            case .index(let after):
                return await nextIndexPage(after: after)
            }
        }
        return nil
    }

    /// The files among `files` (stored keys with the digest of the fingerprint their rows record) whose `lstat`
    /// now is not that one, by name. Absent, not a regular file, no fingerprint recorded, or a file that cannot be
    /// looked at (EACCES, EIO): changed, on purpose, so that `check` looks again and reports the error
    /// (`FileInspector.check` throws it); nothing is decided from a failed look here.
    private static func changed(_ files: [(key: AssetKey, digest: UInt64)], in descriptor: Int32) async -> [String] {
        guard !files.isEmpty else { return [] }
        return await BlockingIO.run {
            let now = DiskStorage.fingerprints(of: files.map(\.key), in: descriptor)
            return zip(files, now).compactMap { file, fingerprint in
                guard let fingerprint, let recorded = FingerprintDigest(stored: file.digest),
                    FingerprintDigest(fingerprint) == recorded
                else { return file.key.fileName }
                return nil
            }
        }
    }

    /// The rescan's next page of the index's rows, after the file name `after`: the files whose `lstat` is not the
    /// one their row records.
    private func nextIndexPage(after cursor: String) async -> (names: [String], urgent: Bool)? {
        let page: [(name: String, fingerprint: FileFingerprint?)]
        do {
            page = try core.index.fingerprints(after: cursor, limit: Self.rescanPage)
        } catch {
            rescanCursor = nil  // the next poll, overflow or SIGHUP rescans again
            errors.report(error, while: "listing the agent's files for a rescan")
            return nil
        }
        // Set before the await: a rescan asked for meanwhile starts over from the first name.
        rescanCursor = page.count < Self.rescanPage ? nil : page.last.map { .index(after: $0.name) }
        let directory = core.directory
        let status = core.storage.status
        let changed = await BlockingIO.run {
            page.filter { file in
                // As in `changed(_:in:)`: a file that cannot be looked at reads as changed, on purpose.
                guard let recorded = file.fingerprint,
                    let now = try? status.fingerprint(of: directory.path(ofAsset: file.name))
                else { return true }
                return now != recorded
            }
            .map(\.name)
        }
        return (changed, false)
    }

    /// Retries accesses whose remembered failure has reached its retry time: keys never stored are fetched,
    /// and stored ones are checked, so a repair that failed (file still missing or corrupt) is tried again.
    /// A failed retry keeps its record, so the backoff keeps growing up to its cap.
    func retryDueFailures() async {
        let loader = core.memory
        let due = loader.keysDueForRetry()
        guard !due.isEmpty else { return }
        let current = Set(core.catalogue.keys)
        var unstored: [AssetKey] = []
        var missing: [AssetKey] = []
        var corrupt: [AssetKey] = []
        for key in due {
            guard current.contains(key), !repairing.contains(key) else {
                if !current.contains(key) { loader.forgetFailure(key) }
                continue
            }
            do {
                guard try core.owned.isStored(key) else {
                    unstored.append(key)
                    continue
                }
                switch try await core.inspector.check(fileNamed: key.fileName) {
                case .intact: loader.forgetFailure(key)
                case .damaged(.missing): missing.append(key)
                case .damaged(.corrupt): corrupt.append(key)
                case .notOwned: unstored.append(key)
                }
            } catch {
                errors.report(error, while: "checking \(key) for its retry")  // its failure stays on record: retried later
            }
        }
        async let fetched: Void = refetch(unstored, reason: nil)
        async let restored: Void = refetch(missing, reason: .missing)
        async let replaced: Void = refetch(corrupt, reason: .corrupt)
        _ = await (fetched, restored, replaced)
    }

    // MARK: - Repairing

    /// Fetches keys from the network and stores them; with a reason, each is a repair (logged by the load that
    /// repairs it; see `AccessPipeline.refetch`). Urgent ones (a person's change) take their transfer slots before
    /// the pass's waiting ones. Keys already being repaired are left to that repair.
    func refetch(_ keys: [AssetKey], reason: DamageReason?, priority: RequestPriority = .normal) async {
        let keys = keys.filter { !repairing.contains($0) }
        guard !keys.isEmpty else { return }
        repairing.formUnion(keys)
        let pipeline = core.pipeline
        await forEachBounded(keys, limit: window) { key in
            _ = try? await pipeline.refetch(key, reason: reason, priority: priority)  // each failure is logged
        }
        repairing.subtract(keys)
        wakeSchedulerIfAsleep()  // failures may now wait for a retry: the scheduler recomputes its deadline
        // Files that changed again while their repair ran (deleted once more, say) are checked now.
        let names = Set(keys.map(AssetFileName.name(for:)))
        let recheck = checksAfterRepair.intersection(names)
        if !recheck.isEmpty {
            checksAfterRepair.subtract(recheck)
            urgentChecks.formUnion(recheck)
            updateUrgentLane()
            alarm.ring()  // even from inside runDueWork: these checks are due now
        }
    }

    /// Fetches again, conditionally, the stored keys whose feed tag changed (bounded window, as accesses).
    func refresh(_ keys: [AssetKey]) async {
        let keys = keys.filter { !repairing.contains($0) }
        guard !keys.isEmpty else { return }
        repairing.formUnion(keys)
        let pipeline = core.pipeline
        await forEachBounded(keys, limit: window) { key in
            try? await pipeline.refresh(key)
        }
        repairing.subtract(keys)
        wakeSchedulerIfAsleep()
    }

    /// Repairs what a scrub found damaged: corrupt files first, then missing ones.
    func repair(_ damaged: [(key: AssetKey, reason: DamageReason)]) async {
        await refetch(damaged.filter { $0.reason == .corrupt }.map(\.key), reason: .corrupt)
        await refetch(damaged.filter { $0.reason == .missing }.map(\.key), reason: .missing)
    }

    /// Open while a person's change waits for its check or repair.
    private func updateUrgentLane() {
        core.urgentLane.set(open: !urgentChecks.isEmpty || urgentRepairs > 0)
    }

    /// Work done outside the scheduler's pass (a repair the watcher started) may have changed the next deadline;
    /// a pass running now recomputes it when it ends.
    private func wakeSchedulerIfAsleep() {
        if !passes.isRunning { alarm.ring() }
    }
}
