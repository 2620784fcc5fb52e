#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import POSIXThreads
import Synchronization

/// Watches one directory, not recursively, with Linux inotify and delivers what happens in it as an
/// `AsyncStream` of event batches.
///
/// The agent uses it to notice within milliseconds when one of its files in DIR is deleted, truncated,
/// overwritten in place, replaced by a rename or moved away, and when DIR itself is deleted or moved.
/// Subdirectories are not watched, so the agent's own temporary files in `DIR/.emojiart-sync/tmp`
/// produce no events (only the final `rename` into DIR does).
///
/// What it owns: an inotify instance (`inotify_init1`) with one watch on the directory
/// (`inotify_add_watch`), a wake eventfd, and a dedicated thread that blocks in `poll(2)` on both and
/// yields batches to ``events``. The thread never runs Swift tasks and tasks never block on inotify.
///
/// Lifecycle: the watch starts in `init`. The stream finishes when ``stop()`` is called, when the
/// directory itself goes away (see ``events``), when its consumer stops iterating, or, rarely, when
/// `poll`/`read` fails (then ``failure`` says why). In every case the descriptors stay open until
/// ``stop()`` or `deinit`, which remove the watch, join the thread and close both descriptors. Keep
/// the watcher alive while you iterate: releasing it stops it.
///
/// ```swift
/// let watcher = try DirectoryWatcher(path: dir)
/// for await batch in watcher.events {
///     if batch.contains(where: \.isOverflow) { rescan() }
///     for event in batch { ... }
/// }
/// // The stream finished: DIR is gone (the agent stops), or the watcher failed (see `failure`).
/// ```
final class DirectoryWatcher: Sendable {
    /// The events asked of the kernel, each for a reason:
    /// - ``InotifyMask/closeWrite``: a writer finished; the file is complete and can be verified now.
    /// - ``InotifyMask/modify``: contents changed in place (`write`, `truncate`, `open` with `O_TRUNC`),
    ///   seen even while the writer keeps the file open.
    /// - ``InotifyMask/attrib``: permissions, owner or timestamps changed (`chmod` making a file
    ///   unreadable), and the link count dropping when a hard link is removed.
    /// - ``InotifyMask/create``: a new name appeared (a stranger's file, or one written in place).
    /// - ``InotifyMask/delete``: a file was removed.
    /// - ``InotifyMask/movedFrom``: a file was renamed away or out of DIR: its name is gone.
    /// - ``InotifyMask/movedTo``: a file was renamed into DIR, replacing what had that name (the
    ///   agent's own atomic writes arrive this way too).
    /// - ``InotifyMask/deleteSelf``: DIR itself was deleted; the watch ends.
    /// - ``InotifyMask/moveSelf``: DIR itself was renamed; the path no longer means this directory.
    /// - ``InotifyMask/onlyDirectory``: fail with `ENOTDIR` instead of watching a plain file by mistake.
    /// - ``InotifyMask/excludeUnlinked``: after a file is unlinked, stop reporting events from someone
    ///   who still holds it open; they no longer concern anything in DIR.
    static let watchMask: InotifyMask = [
        .closeWrite, .modify, .attrib, .create, .delete, .movedFrom, .movedTo,
        .deleteSelf, .moveSelf, .onlyDirectory, .excludeUnlinked,
    ]

    /// The watched directory, as given.
    let path: String

    /// The reader thread's name, `dirwatch-N` with N counting watchers in this process, as shown in
    /// `/proc/self/task/*/comm` and `top -H`: tells watchers' threads apart when debugging, and lets
    /// tests find this watcher's thread among others running at the same time.
    let threadName: String

    /// Batches of events in arrival order; iterate it once.
    ///
    /// Each element is everything one `read(2)` of the inotify descriptor returned, in the kernel's
    /// order, so a burst (2,000 files deleted at once) arrives as a few large batches rather than
    /// thousands of elements, and nothing is dropped: the buffer is unbounded, one element per read.
    /// If the kernel's queue overflowed, a batch contains an event with ``InotifyMask/queueOverflow``
    /// (and no name): rescan the directory.
    ///
    /// The stream finishes when ``stop()`` is called, or right after delivering an event for the
    /// directory itself with ``InotifyMask/deleteSelf``, ``InotifyMask/moveSelf``,
    /// ``InotifyMask/ignored`` or ``InotifyMask/unmount`` (see ``WatchEvent/endsWatch``): then the
    /// watch is gone or no longer means `path`, and the caller decides what follows (the agent stops with exit
    /// status 1).
    let events: AsyncStream<[WatchEvent]>

    /// Why the stream ended early, if `poll` or `read` failed; nil otherwise (also after a normal stop
    /// or the end of the watched directory).
    var failure: WatchError? { readerFailure.value }

    /// The inotify instance (`inotify_init1`); closed by ``stop()``.
    private let inotifyDescriptor: Int32
    /// The watch on ``path`` (`inotify_add_watch`'s result).
    private let watchDescriptor: Int32
    /// Wakes the thread for ``stop()``; also signalled when the stream's consumer goes away.
    private let wake: WakeSignal
    /// The stream's input, kept to finish the stream in ``stop()``.
    private let continuation: AsyncStream<[WatchEvent]>.Continuation
    /// Filled in by the reader thread if it ends on an error.
    private let readerFailure: ReaderFailure
    /// The reader thread until ``stop()`` has joined it, then nil. The lock is held for all of
    /// ``stop()``, so a second, concurrent caller returns only after the first has finished.
    private let thread: Mutex<JoinableThread?>

    /// The number of the next watcher's thread name.
    private static let nextSerial = Atomic<Int>(1)

    /// Starts watching `path`.
    ///
    /// Throws ``WatchError``: ``WatchError/Kind/noSuchDirectory`` or ``WatchError/Kind/notADirectory``
    /// for a bad path; for `EMFILE` from `inotify_init1`, ``WatchError/Kind/instanceLimit`` whose
    /// message names the sysctl `fs.inotify.max_user_instances` and its current value (read from
    /// `/proc/sys/fs/inotify/max_user_instances`); for `ENOSPC` from `inotify_add_watch`,
    /// ``WatchError/Kind/watchLimit`` whose message names `fs.inotify.max_user_watches`, its value, and
    /// how to raise it (`sysctl -w fs.inotify.max_user_watches=N`, or a file in /etc/sysctl.d/).
    /// Nothing is left open when it throws.
    /// `sifting`, when given, sees each batch on the reader thread as it is read, before any task could, and returns
    /// what of it to yield (an empty result yields nothing): the agent's `RenameGate` hears of a deletion there,
    /// while the cooperative pool may be busy with a sync's jobs for milliseconds.
    init(path: String, sifting: (@Sendable ([WatchEvent]) -> [WatchEvent])? = nil) throws(WatchError) {
        // Non-blocking, so a read after a spurious wake-up returns EAGAIN instead of hanging the thread;
        // close-on-exec, so child processes do not inherit the descriptor.
        let inotifyDescriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard inotifyDescriptor >= 0 else {
            throw WatchError.initFailed(errno: errno, path: path)
        }
        let watchDescriptor = inotify_add_watch(inotifyDescriptor, path, Self.watchMask.rawValue)
        guard watchDescriptor >= 0 else {
            let code = errno
            _ = close(inotifyDescriptor)
            throw WatchError.addWatchFailed(errno: code, path: path)
        }
        let wake: WakeSignal
        do {
            wake = try WakeSignal(path: path)
        } catch {
            _ = close(inotifyDescriptor)
            throw error
        }

        let (stream, continuation) = AsyncStream.makeStream(
            of: [WatchEvent].self, bufferingPolicy: .unbounded)
        // A consumer that stops iterating (its task cancelled, the stream dropped) can never read again:
        // wake the thread so it ends now instead of reading for nobody. Safe after stop(): signal()
        // does nothing once the eventfd is closed.
        continuation.onTermination = { _ in wake.signal() }

        let readerFailure = ReaderFailure()
        let threadName = "dirwatch-\(Self.nextSerial.wrappingAdd(1, ordering: .relaxed).oldValue)"
        let reader = InotifyReader(
            inotifyDescriptor: inotifyDescriptor, wakeDescriptor: wake.descriptor,
            continuation: continuation, failure: readerFailure, path: path, sifting: sifting)
        let thread: JoinableThread
        do {
            thread = try JoinableThread.start(name: threadName, handing: reader) { $0.run() }
        } catch {
            continuation.finish()
            wake.close()
            _ = close(inotifyDescriptor)
            // pthread_create returns the error number instead of setting errno.
            throw WatchError.system(
                "pthread_create", errno: error.code, path: path, doing: "cannot start the thread that watches \(path)")
        }

        self.path = path
        self.threadName = threadName
        self.events = stream
        self.inotifyDescriptor = inotifyDescriptor
        self.watchDescriptor = watchDescriptor
        self.wake = wake
        self.continuation = continuation
        self.readerFailure = readerFailure
        self.thread = Mutex<JoinableThread?>(thread)
    }

    /// Stops watching: wakes the reader thread and waits for it to exit, removes the watch
    /// (`inotify_rm_watch`), closes the inotify descriptor and the eventfd, and finishes ``events``.
    ///
    /// Idempotent and safe from any thread; returns only after the thread has exited, also when
    /// another thread's call is doing the work. It blocks the caller for as long as the reader takes
    /// to notice the wake-up (microseconds: it is parked in `poll`), so calling it from a task is fine.
    func stop() {
        thread.withLock { thread in
            guard let running = thread else { return }
            thread = nil
            wake.signal()
            running.join()
            // Fails with EINVAL when the kernel already removed the watch (the directory was deleted or
            // unmounted); closing the instance below would remove it anyway.
            _ = inotify_rm_watch(inotifyDescriptor, watchDescriptor)
            _ = close(inotifyDescriptor)
            wake.close()
            continuation.finish()
        }
    }

    /// Asks the reader thread to end and finish ``events``, without waiting for it: safe where blocking is not,
    /// such as a task cancellation handler (the reader's last `yield` may need the very task whose handler is
    /// running, so joining there would deadlock). Call ``stop()`` afterwards, outside the handler, to release
    /// the descriptors. If a `stop()` is already under way this does nothing: that call ends the thread.
    func requestStop() {
        _ = thread.withLockIfAvailable { thread in
            if thread != nil { wake.signal() }
        }
    }

    deinit {
        stop()
    }
}
