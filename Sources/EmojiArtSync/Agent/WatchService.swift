import Logging

/// Watches DIR with inotify and hands what happens in it to the keeper's `RepairQueue` at once (`WatchBacklog`),
/// and its deletions to the `RenameGate` that holds repairs' renames while DIR is being emptied.
///
/// When DIR or its state directory is gone (deleted, moved away, replaced), the agent stops with exit status 1
/// naming the folder, before repairing anything into it: a folder being removed is the user's decision, and under
/// systemd `Restart=on-failure` with the unit's `ExecStartPre=` mkdir brings the agent back on a fresh one. When
/// inotify cannot be used at all, it falls back to periodic rescans (`WatchMode.polling`: the schedule service
/// does them) and ends.
struct WatchService: AgentService {
    let name = "watch"
    let directory: SyncDirectory
    /// Which folder DIR was when the agent started; nil when it could not be `stat`ed then.
    let identity: DirectoryIdentity?
    let gate: RenameGate
    let keeper: MirrorKeeper
    let mode: WatchMode
    let stop: AgentStop
    /// How often the schedule service rescans if inotify cannot be used (for the log line that says so).
    let fallbackRescanInterval: Duration
    let logger: Logger

    func loop() async {
        let watcher: DirectoryWatcher
        do {
            // The gate hears of each batch on the reader thread, as it is read (`RenameGate.note`): a deletion shuts
            // it before any task could run, and the agent's own renames into DIR are left out of what is yielded.
            watcher = try DirectoryWatcher(path: directory.root, sifting: { [gate] batch in gate.note(batch) })
        } catch {
            if error.kind == .instanceLimit || error.kind == .watchLimit {
                fallBackToRescans(error.message)
                return
            }
            stop.fail(SyncError(.system, "cannot watch \(directory.root): \(error)", path: directory.root))
            return
        }
        mode.set(.inotify)
        let backlog = WatchBacklog()
        gate.startWatching(listings: listingMonitor())
        await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await batch in watcher.events {
                        // Here, as each batch comes, not when the acting task gets to it: the agent stops, naming
                        // why, as soon as DIR is seen gone (the gate was shut for good on the reader thread).
                        if let gone = vanished(batch) { stop.directoryGone(directory, gone) }
                        backlog.add(batch)
                    }
                    backlog.end()
                }
                // What a person's change asks for runs at a higher priority than the passes: the silo and the
                // cooperative pool run waiting jobs in priority order, so a repair's check, fetch and commit go ahead
                // of a cold sync's thousands of jobs. Its own task, because a child task runs at its parent's priority.
                let acting = Task(priority: .high) { await act(on: backlog) }
                await withTaskCancellationHandler { await acting.value } onCancel: { acting.cancel() }
                watcher.requestStop()  // DIR is gone: the reader ends too
                await group.waitForAll()
            }
        } onCancel: {
            watcher.requestStop()  // never block in a cancellation handler: the reader may need this task
        }
        watcher.stop()
        if Task.isCancelled || stop.isRequested { return }
        // The stream ended while DIR is still the same folder: poll(2) or read(2) on inotify failed.
        fallBackToRescans(watcher.failure?.message ?? "the watch ended")
    }

    /// Who else opens and lists DIR, for the gate (`RenameGate`); nil, said once in the log, where fanotify cannot
    /// serve (a kernel older than 5.13 without `CAP_SYS_ADMIN`, a file system without file handles).
    private func listingMonitor() -> DirectoryListingMonitor? {
        do {
            return try DirectoryListingMonitor(path: directory.root)
        } catch {
            logger.notice("fanotify unavailable, cannot tell when another program lists DIR", metadata: [
                "event": "watch", "result": "no-listing-monitor", "error": .string(error.message),
                "effect": "a 'rm -rf DIR' during a large sync may fail with 'Directory not empty'",
            ])
            return nil
        }
    }

    /// Hands the backlog's events to the keeper as they come due, until the watch ends, DIR is gone (then the
    /// agent is stopped) or the task is cancelled. Each batch is handled in a child task of its own, so the events
    /// that come while a repair runs (its fetch, its commit, DIR's `fsync`) are checked and repaired at once, not
    /// after it; with `handledAtOnce` batches in hand, the next waits, and the events meanwhile gather in the
    /// backlog into one batch.
    private func act(on backlog: WatchBacklog) async {
        await withTaskGroup(of: Void.self) { handling in
            var inHand = 0
            while !Task.isCancelled {
                switch backlog.take() {
                case .wait:
                    await backlog.alarm.sleep(until: nil)
                case .events(let batch, let ended):
                    if let gone = vanished(batch) {
                        stop.directoryGone(directory, gone)
                        return
                    }
                    if inHand == Self.handledAtOnce {
                        await handling.next()
                        inHand -= 1
                    }
                    handling.addTask { await handle(batch) }
                    inHand += 1
                    if ended { return }
                }
            }
        }
    }

    /// Batches of events handled side by side at most.
    static let handledAtOnce = 4

    private func fallBackToRescans(_ reason: String) {
        mode.set(.polling)
        logger.error("inotify unavailable, falling back to periodic rescans", metadata: [
            "event": "watch", "result": "fallback", "error": .string(reason),
            "rescan_every": .string(fallbackRescanInterval.secondsText),
        ])
        keeper.alarm.ring()
    }

    /// Why DIR is no longer the folder the agent started on, from the watcher's events or from `stat`; nil
    /// while it still is.
    private func vanished(_ batch: [WatchEvent]) -> String? {
        for event in batch {
            if event.endsWatch {
                if event.mask.contains(.deleteSelf) { return "it was deleted" }
                if event.mask.contains(.moveSelf) { return "it was moved away" }
                if event.mask.contains(.unmount) { return "its file system was unmounted" }
                return "the kernel ended the watch on it"
            }
            if WatchBacklog.touchesStateDirectory(event) {
                return "its state directory \(directory.stateDirectory) was \(event.mask.contains(.delete) ? "deleted" : "moved away")"
            }
        }
        return identity?.change(in: directory)
    }

    private func handle(_ batch: [WatchEvent]) async {
        // Repairs start at once, even while deletions in DIR have the gate shut: a repair's check and fetch touch
        // nothing `rm -rf DIR` could trip over, and its temporary file waits for the gate (`AccessPipeline.stage`).
        if gate.isShutForGood { return }  // DIR is gone: nothing to repair into
        var names: [String] = []
        var rescan = false
        for event in batch {
            if event.mask.contains(.queueOverflow) {
                rescan = true
            } else if let name = event.name, !name.hasPrefix(".") {
                names.append(name)
            }
        }
        let repairs = keeper.repairs
        if rescan {
            logger.warning("inotify queue overflowed, rescanning", metadata: ["event": "watch", "result": "overflow"])
            await repairs.rescanAll()
        }
        await repairs.noteChanged(fileNames: names)
        await repairs.checkPending(urgentOnly: true)
    }
}
