#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// The loop a ``DirectoryWatcher`` runs on its own thread: wait in `poll(2)` on the inotify descriptor
/// and the wake eventfd, read whatever the kernel queued, parse it and yield it to the stream.
///
/// Thread-confined, and for that reason not `Sendable`: ``DirectoryWatcher`` creates it, hands it to
/// the thread it starts (`JoinableThread.start(name:handing:_:)`) and never touches it again; from then on only the reader thread
/// uses it, so the read buffer needs no lock. It does not own the descriptors (the watcher closes them,
/// after the thread has exited); it owns the buffer and frees it in `deinit`.
///
/// The loop ends, finishing the stream, when:
/// - the wake eventfd becomes readable (``DirectoryWatcher/stop()``, or the stream's consumer went away);
/// - a batch contained an event that ends the watch (``WatchEvent/endsWatch``), after yielding it;
/// - the stream was terminated (a yield returned `.terminated`);
/// - `poll` or `read` failed with anything but `EINTR`/`EAGAIN` (recorded in ``ReaderFailure``).
final class InotifyReader {
    /// Bytes per `read(2)`. The kernel returns as many whole records as fit; a record is 16 bytes plus
    /// the name padded to 16, so 64 KiB holds about 2,000 events with short names per read (a burst
    /// arrives as few large batches), and comfortably more than the largest single record
    /// (16 + NAME_MAX + 1 bytes), below which `read` would fail with `EINVAL`.
    static let bufferSize = 64 * 1024

    /// The inotify instance (`inotify_init1`), non-blocking.
    private let inotifyDescriptor: Int32
    /// The wake eventfd (see ``WakeSignal``); only polled, never read: any wake-up means "stop".
    private let wakeDescriptor: Int32
    /// Where batches go.
    private let continuation: AsyncStream<[WatchEvent]>.Continuation
    /// Where a failure of `poll` or `read` is reported to the watcher.
    private let failure: ReaderFailure
    /// The watched directory, for error messages.
    private let path: String
    /// The read buffer, aligned for `struct inotify_event`.
    private let buffer: UnsafeMutableRawBufferPointer
    /// Sees each batch on this thread as it is read, and says what of it to yield (`DirectoryWatcher`'s `sifting`).
    private let sifting: (@Sendable ([WatchEvent]) -> [WatchEvent])?

    /// Prepares a reader; nothing runs until ``run()``.
    init(
        inotifyDescriptor: Int32, wakeDescriptor: Int32,
        continuation: AsyncStream<[WatchEvent]>.Continuation, failure: ReaderFailure, path: String,
        sifting: (@Sendable ([WatchEvent]) -> [WatchEvent])? = nil
    ) {
        self.sifting = sifting
        self.inotifyDescriptor = inotifyDescriptor
        self.wakeDescriptor = wakeDescriptor
        self.continuation = continuation
        self.failure = failure
        self.path = path
        buffer = UnsafeMutableRawBufferPointer.allocate(
            byteCount: Self.bufferSize, alignment: MemoryLayout<inotify_event>.alignment)
    }

    deinit {
        buffer.deallocate()
    }

    /// The thread's body: loops until one of the ends listed on the type, then finishes the stream.
    func run() {
        defer { continuation.finish() }
        let inotifySlot = 0
        let wakeSlot = 1
        var pollSet = [
            pollfd(fd: inotifyDescriptor, events: Int16(POLLIN), revents: 0),
            pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        while true {
            // Blocks this thread, never a task: that is what the thread is for. No timeout: stop wakes it.
            do {
                _ = try retryingInterrupts { poll(&pollSet, nfds_t(pollSet.count), -1) }
            } catch {
                failure.record(.system("poll", errno: error.errno, path: path, doing: "stopped watching \(path)"))
                return
            }
            if pollSet[wakeSlot].revents != 0 { return }
            let revents = Int32(pollSet[inotifySlot].revents)
            if revents & (POLLERR | POLLNVAL) != 0 {
                failure.record(
                    .system("poll", errno: EBADF, path: path,
                            doing: "stopped watching \(path): the inotify descriptor reported an error"))
                return
            }
            guard revents & POLLIN != 0 else { continue }
            // One read per wake-up, so a flood of events cannot keep the loop from seeing a stop.
            let count: Int
            do {
                count = try retryingInterrupts { read(inotifyDescriptor, buffer.baseAddress, buffer.count) }
            } catch where error.errno == EAGAIN {
                continue
            } catch {
                failure.record(.system("read", errno: error.errno, path: path, doing: "stopped watching \(path)"))
                return
            }
            let parsed = InotifyRecordParser.parse(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
            let events = sifting.map { $0(parsed) } ?? parsed
            if !events.isEmpty, case .terminated = continuation.yield(events) { return }
            if parsed.contains(where: \.endsWatch) { return }
        }
    }
}

/// The error that ended a ``DirectoryWatcher``'s stream early, written by the reader thread and read
/// by anyone through ``DirectoryWatcher/failure``. The first error wins.
final class ReaderFailure: Sendable {
    private let error = Mutex<WatchError?>(nil)

    /// Records `newError` unless an earlier one is already recorded.
    func record(_ newError: WatchError) {
        error.withLock { error in
            if error == nil { error = newError }
        }
    }

    /// The recorded error, if any.
    var value: WatchError? {
        error.withLock { $0 }
    }
}
