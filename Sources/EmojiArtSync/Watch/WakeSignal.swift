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
/// `eventfd` is declared in `<sys/eventfd.h>`, which Swift's `Glibc` module does not include (it has
/// `<sys/inotify.h>` but not this header). Rather than a C shim for one function, the C function is
/// looked up in the already-loaded C library by name (`dlsym`) and called through a typed C function
/// pointer with its exact C signature, `int eventfd(unsigned int initval, int flags)`.
final class WakeSignal: Sendable {
    /// The descriptor number for the reader's poll set. Valid from `init` until ``close()``, which
    /// happens only after the reader thread has exited.
    let descriptor: Int32
    /// True until ``close()``.
    private let isOpen = Mutex(true)

    /// `EFD_CLOEXEC` from `<sys/eventfd.h>`: defined there as `O_CLOEXEC` (02000000 on Linux).
    private static let eventFDCloseOnExec = Int32(O_CLOEXEC)
    /// `EFD_NONBLOCK` from `<sys/eventfd.h>`: defined there as `O_NONBLOCK` (04000 on Linux). A full
    /// counter then fails with `EAGAIN` instead of blocking the thread that calls ``signal()``.
    private static let eventFDNonBlocking = Int32(O_NONBLOCK)

    /// Creates the eventfd with a zero counter, close-on-exec and non-blocking.
    /// - Parameter path: the watched directory, for the error message only.
    init(path: String) throws(WatchError) {
        guard let eventfd = EventFDFunction.lookUp() else {
            throw WatchError(
                kind: .system, message: "cannot watch \(path): the C library has no eventfd function",
                call: "eventfd", errno: ENOSYS, path: path)
        }
        let fd = eventfd.call(0, Self.eventFDCloseOnExec | Self.eventFDNonBlocking)
        guard fd >= 0 else {
            throw WatchError.system("eventfd", errno: errno, path: path, doing: "cannot watch \(path)")
        }
        descriptor = fd
    }

    /// Adds 1 to the counter, which makes the descriptor readable and wakes a `poll` on it. Does
    /// nothing after ``close()``. `EAGAIN` (counter full) means it is already readable: fine.
    func signal() {
        isOpen.withLock { isOpen in
            guard isOpen else { return }
            var one: UInt64 = 1
            while write(descriptor, &one, MemoryLayout<UInt64>.size) < 0 && errno == EINTR {}
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

/// The C function `eventfd`, found in the loaded C library (see ``WakeSignal``).
private struct EventFDFunction: Sendable {
    /// `int eventfd(unsigned int initval, int flags)`. C function pointers are `Sendable`: plain code addresses.
    typealias Signature = @convention(c) (UInt32, Int32) -> Int32

    /// The function in the C library, valid for the life of the process.
    private let function: Signature

    /// Looked up once per process.
    private static let shared: EventFDFunction? = {
        // dlopen(NULL) is the handle of the program and everything it loaded, the C library included.
        guard let handle = dlopen(nil, RTLD_NOW) else { return nil }
        defer { _ = dlclose(handle) }
        guard let symbol = dlsym(handle, "eventfd") else { return nil }
        return EventFDFunction(function: unsafeBitCast(symbol, to: Signature.self))
    }()

    /// The function, or nil when the C library does not export it.
    static func lookUp() -> EventFDFunction? { shared }

    /// Calls `eventfd(initialValue, flags)`.
    func call(_ initialValue: UInt32, _ flags: Int32) -> Int32 {
        function(initialValue, flags)
    }
}
