#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The POSIX thread an ``InotifyReader`` runs on (`pthread_create`, `pthread_join`).
///
/// A dedicated thread because `poll(2)` blocks, and blocking calls must stay off Swift's cooperative
/// pool. Joinable, unlike Foundation's `Thread`, so that ``DirectoryWatcher/stop()`` can return only
/// after the thread is gone, which is what makes "no threads leak" a property tests can check.
struct WatcherThread: Sendable {
    /// The thread (`pthread_t`, an integer on Linux).
    private let thread: pthread_t

    /// Starts a thread running `reader.run()`.
    ///
    /// The reader is handed over as a pointer retained once; the new thread takes that reference over
    /// and drops it when `run()` returns, so the reader (and its buffer) lives exactly as long as the
    /// thread. The caller must not use `reader` afterwards: it is thread-confined from here on.
    /// - Parameter path: the watched directory, for the error message only.
    static func start(_ reader: consuming InotifyReader, path: String) throws(WatchError) -> WatcherThread {
        let handOver = Unmanaged.passRetained(reader).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            Unmanaged<InotifyReader>.fromOpaque(argument).takeRetainedValue().run()
            return nil
        }, handOver)
        guard result == 0 else {
            Unmanaged<InotifyReader>.fromOpaque(handOver).release()
            // pthread_create returns the error number instead of setting errno.
            throw WatchError.system(
                "pthread_create", errno: result, path: path, doing: "cannot start the thread that watches \(path)")
        }
        return WatcherThread(thread: thread)
    }

    /// Waits until the thread has ended (`pthread_join`). Called on the thread itself, where joining
    /// would deadlock, it detaches it instead (`pthread_detach`) and the thread ends on its own.
    func join() {
        if pthread_equal(thread, pthread_self()) != 0 {
            _ = pthread_detach(thread)
        } else {
            _ = pthread_join(thread, nil)
        }
    }
}
