import CShims

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Synchronization

/// The `eventfd(2)` that wakes a ``DirectoryWatcher``'s reader thread out of `poll(2)` to stop it.
///
/// Owns one descriptor. Any thread may ``signal()`` it any number of times, also after ``close()``
/// (then it does nothing): the stream's termination handler signals, and it can run late. The open
/// flag and the descriptor are guarded together by a `Mutex`, so a signal never writes to a number that
/// was closed and perhaps reused by an unrelated `open` meanwhile.
///
/// `eventfd` is declared in `<sys/eventfd.h>`, which Swift's `Glibc` module does not include, so it is
/// made by `emojiart_wake_eventfd` in `CShims` (Sources/CShims/eventfd.c).
final class WakeSignal: Sendable {
    /// The descriptor number for the reader's poll set. Valid from `init` until ``close()``, which
    /// happens only after the reader thread has exited.
    let descriptor: Int32
    /// True until ``close()``.
    private let isOpen = Mutex(true)

    /// Creates the eventfd with a zero counter, close-on-exec and non-blocking (a full counter then fails
    /// with `EAGAIN` instead of blocking the thread that calls ``signal()``).
    /// - Parameter path: the watched directory, for the error message only.
    init(path: String) throws(WatchError) {
        do {
            descriptor = try retryingInterrupts { emojiart_wake_eventfd() }
        } catch {
            throw WatchError.system("eventfd", errno: error.errno, path: path, doing: "cannot watch \(path)")
        }
    }

    /// Adds 1 to the counter, which makes the descriptor readable and wakes a `poll` on it. Does
    /// nothing after ``close()``. `EAGAIN` (counter full) means it is already readable: fine.
    func signal() {
        isOpen.withLock { isOpen in
            guard isOpen else { return }
            var one: UInt64 = 1
            _ = try? retryingInterrupts { write(descriptor, &one, MemoryLayout<UInt64>.size) }
        }
    }

    /// Closes the descriptor; idempotent. Call only once the reader thread no longer polls it.
    func close() {
        isOpen.withLock { isOpen in
            guard isOpen else { return }
            isOpen = false
            closeDescriptor(descriptor)
        }
    }

    deinit {
        close()
    }
}

/// `close(2)`, under a name the `close()` method above does not shadow.
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}
