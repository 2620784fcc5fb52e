import CurlHTTP
import FoundationEssentials
import Logging

/// Accessing, checking and repairing: what inotify events, rescans, retries and scrubs lead to. Changes a
/// person made (inotify) are checked first, with the urgent lane open, so a repair never waits behind a pass.
extension MirrorKeeper {
    /// Fetches keys from the network and stores them; with a reason, each is a repair (logged by the load that
    /// repairs it; see `AccessPipeline.refetch`). Urgent ones (a person's change) take their transfer slots before
    /// the pass's waiting ones.
    func refetch(_ keys: [AssetKey], reason: DamageReason?, priority: RequestPriority = .normal) async {
        let keys = keys.filter { !repairing.contains($0) }
        guard !keys.isEmpty else { return }
        repairing.formUnion(keys)
        let pipeline = core.pipeline
        await forEachBounded(keys, limit: configuration.accessWindow) { key in
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

    /// Queues files for a check (names from inotify events: a person changed them, so they go first, ahead of
    /// the next batch of any pass); `checkPending()` processes them.
    public func noteChanged(fileNames: some Sequence<String>) {
        urgentChecks.formUnion(fileNames)
        updateUrgentLane()
    }

    /// Queues every owned file for a check (inotify overflow, `SIGHUP`, the fallback timer, DIR recreated): a
    /// rescan, from the first name; one under way starts over.
    public func rescanAll() {
        rescanCursor = ""
    }

    public var hasPendingChecks: Bool { rescanCursor != nil || !urgentChecks.isEmpty }

    /// Files the index holds per rescan page: one query on the silo, the `lstat`s off it.
    static let rescanPage = 1024

    /// Open while a person's change waits for its check or repair.
    func updateUrgentLane() {
        core.urgentLane.set(open: !urgentChecks.isEmpty || urgentRepairs > 0)
    }

    /// The next checks to run: every urgent one, else (unless `urgentOnly`) the files of the rescan's next page
    /// of the index whose `lstat` is not the one their row records (the rest are intact: `check` would find
    /// the same with a lookup and two `lstat`s each, on the silo). Nil when there is nothing left to check.
    func nextChecks(urgentOnly: Bool) async -> (names: [String], urgent: Bool)? {
        if !urgentChecks.isEmpty {
            let names = urgentChecks.sorted()
            urgentChecks.removeAll()
            return (names, true)
        }
        guard !urgentOnly, let cursor = rescanCursor else { return nil }
        let page: [(name: String, fingerprint: FileFingerprint?)]
        do {
            page = try core.index.fingerprints(after: cursor, limit: Self.rescanPage)
        } catch {
            rescanCursor = nil  // the next poll, overflow or SIGHUP rescans again
            report(error, while: "listing the agent's files for a rescan")
            return nil
        }
        // Set before the await: a rescan asked for meanwhile starts over from the first name.
        rescanCursor = page.count < Self.rescanPage ? nil : page.last?.name
        let directory = core.directory
        let changed = await BlockingIO.run {
            page.filter { $0.fingerprint == nil || FileFingerprint.of(directory.path(ofAsset: $0.name)) != $0.fingerprint }
                .map(\.name)
        }
        return (changed, false)
    }

    /// Checks queued files and repairs the agent's damaged ones. Re-entrant calls return at once: the running
    /// loop takes urgent names first at its next batch, so a burst of events costs a few passes, not one per event.
    /// Between batches of a rescan it lets other work of the silo run (a person's change being queued).
    ///
    /// `urgentOnly` (the watcher): only the changes a person made, never the rescan backlog, which the scheduler
    /// works through: a watcher that took on the rescan that every `SIGHUP` queues stopped reading inotify for
    /// as long as `SIGHUP`s kept coming (repairs waited up to 30 s at 30,000 assets).
    public func checkPending(urgentOnly: Bool = false) async {
        guard !checking else { return }
        checking = true
        defer {
            checking = false
            if urgentOnly, rescanCursor != nil { alarm.ring() }  // the rescan left is the scheduler's
        }
        while let (names, urgent) = await nextChecks(urgentOnly: urgentOnly) {
            if urgent { urgentRepairs += 1 }
            var missing: [AssetKey] = []
            var corrupt: [AssetKey] = []
            for name in names {
                if Task.isCancelled { break }  // stopping: the next start checks everything anyway
                do {
                    guard let key = try core.owned.key(forFileNamed: name) else { continue }
                    if repairing.contains(key) {
                        checksAfterRepair.insert(name)
                        continue
                    }
                    switch try await core.inspector.check(fileNamed: name) {
                    case .damaged(.missing): missing.append(key)
                    case .damaged(.corrupt): corrupt.append(key)
                    case .intact, .notOwned: break
                    }
                } catch {
                    // Checked again by the next poll's rescan, or the next event for the file.
                    report(error, while: "checking \(name)")
                }
            }
            let priority: RequestPriority = urgent ? .urgent : .normal
            async let missingDone: Void = refetch(missing, reason: .missing, priority: priority)
            async let corruptDone: Void = refetch(corrupt, reason: .corrupt, priority: priority)
            _ = await (missingDone, corruptDone)
            if urgent { urgentRepairs -= 1 }
            updateUrgentLane()
            if Task.isCancelled { return }
            if !urgent { await Task.yield() }
        }
    }

    /// Retries accesses whose remembered failure has reached its retry time: keys never stored are fetched,
    /// and stored ones are checked, so a repair that failed (file still missing or corrupt) is tried again.
    /// A failed retry keeps its record, so the backoff keeps growing up to its cap.
    public func retryDueFailures() async {
        let due = loader.keysDueForRetry()
        guard !due.isEmpty else { return }
        let current = Set(feedKeys)
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
                report(error, while: "checking \(key) for its retry")  // its failure stays on record: retried later
            }
        }
        async let fetched: Void = refetch(unstored, reason: nil)
        async let restored: Void = refetch(missing, reason: .missing)
        async let replaced: Void = refetch(corrupt, reason: .corrupt)
        _ = await (fetched, restored, replaced)
    }

    /// Forgets every remembered failure, so the next attempts happen now (`SIGHUP`: "try again now").
    public func forgetFailures() {
        do {
            try core.pipeline.forgetFailures()
        } catch {
            report(error, while: "forgetting the failures on record")
        }
    }

    /// What `SIGHUP` asks for: every failure retried now, a full pass over the feed, every owned file checked.
    /// Returns the number of the scheduler pass that carries it out, for `waitForPass(_:)`.
    public func reload() async -> Int {
        forgetFailures()
        pollNow(fullPass: true)
        rescanAll()
        return passes.nextPass
    }

    /// Returns once scheduler pass `pass` (from `reload()`) has ended, or when the calling task is cancelled.
    public func waitForPass(_ pass: Int) async {
        await passes.waitUntilEnded(pass)
    }

    /// One scrub step; what it finds damaged is repaired now (`event=repair reason=corrupt|missing`).
    public func scrubStep() async {
        await repair(await scrubber.step().damaged)
    }

    /// A whole scrub pass now (`emojiart-sync scrub` asked for it through `RequestInbox`), published in the status
    /// as `lastScrub` as soon as it is done, then the repairs of what it found damaged.
    @discardableResult
    public func scrubNow() async -> AgentStatus.Scrub {
        let found = await scrubber.fullPass()
        scrubSequence += 1
        let record = AgentStatus.Scrub(
            sequence: scrubSequence, files: found.files, bytes: found.bytes,
            damaged: found.damaged.map { AssetFileName.name(for: $0.key) }, at: Date())
        lastScrub = record
        core.log.changes.ring()  // `scrub` waits for the status file to show it
        await repair(found.damaged)
        return record
    }

    private func repair(_ damaged: [(key: AssetKey, reason: DamageReason)]) async {
        await refetch(damaged.filter { $0.reason == .corrupt }.map(\.key), reason: .corrupt)
        await refetch(damaged.filter { $0.reason == .missing }.map(\.key), reason: .missing)
    }

}
