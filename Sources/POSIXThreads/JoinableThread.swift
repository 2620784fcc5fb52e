#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A named POSIX thread for blocking work (`poll(2)` on inotify, `curl_multi_poll`, `accept(2)`), which must
/// stay off Swift's cooperative pool.
///
/// Joinable, unlike Foundation's `Thread`, so an owner's stop can return only once its thread is gone: that is
/// what makes "no thread outlives its owner" a property tests check. Named (`/proc/PID/task/*/comm`, `top -H`)
/// so a person or a test can tell it from the process's other threads. The package's one place that calls
/// `pthread_create`: the HTTP client, the directory watcher and the embedded server all start threads here.
public struct JoinableThread: Sendable {
    /// `pthread_create` failed with `code` (`EAGAIN`: the process or system is out of threads).
    public struct StartFailure: Error, Sendable, CustomStringConvertible {
        public let code: Int32
        public var description: String { "cannot start a thread: \(String(cString: strerror(code)))" }
    }

    private let thread: pthread_t

    /// Starts a thread named `name` (the kernel keeps 15 bytes) running `body`; throws with the `pthread_create`
    /// error when none can be made.
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) throws(StartFailure) -> JoinableThread {
        final class Start: Sendable {
            let name: String
            let body: @Sendable () -> Void
            init(name: String, body: @escaping @Sendable () -> Void) {
                self.name = name
                self.body = body
            }
        }
        // The new thread takes over this one retain; if it never starts, it is dropped here.
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let start = Unmanaged<Start>.fromOpaque(argument).takeRetainedValue()
            ThreadName.setCurrent(start.name)
            start.body()
            return nil
        }, start)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw StartFailure(code: result)
        }
        return JoinableThread(thread: thread)
    }

    /// Starts a thread named `name` that runs `body(owned)`: `owned` is handed over to it (`sending`: the caller
    /// cannot touch it again) and lives exactly as long as the thread. For an object confined to its thread,
    /// like a libcurl multi handle or an inotify reader, which is not `Sendable` and need not be.
    public static func start<Owned: AnyObject>(
        name: String, handing owned: sending Owned, _ body: @escaping @Sendable (Owned) -> Void
    ) throws(StartFailure) -> JoinableThread {
        // The object crosses as an address holding one retain, taken over by the thread (or dropped below if
        // the thread never starts); `sending` guarantees no reference to it is left on this side.
        let address = UInt(bitPattern: Unmanaged.passRetained(owned).toOpaque())
        @Sendable func take() -> Owned {
            Unmanaged<Owned>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeRetainedValue()
        }
        do {
            return try start(name: name) { body(take()) }
        } catch {
            _ = take()
            throw error
        }
    }

    /// Starts a detached thread named `name` running `body`: nobody joins it, and the kernel frees it when it
    /// returns. For work whose owner counts its threads down instead (the embedded server's connections): a
    /// joinable thread nobody joins stays a zombie.
    public static func startDetached(name: String, _ body: @escaping @Sendable () -> Void) throws(StartFailure) {
        let thread = try start(name: name, body)
        _ = pthread_detach(thread.thread)
    }

    /// Waits for the thread to end (`pthread_join`). Called on the thread itself, where joining would
    /// deadlock, it detaches the thread instead, which then ends on its own.
    public func join() {
        if pthread_equal(thread, pthread_self()) != 0 {
            _ = pthread_detach(thread)
        } else {
            _ = pthread_join(thread, nil)
        }
    }
}
