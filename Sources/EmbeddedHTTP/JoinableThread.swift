import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A POSIX thread running a closure: joinable (the accepting thread, which `HTTPServer.stop()` joins), or
/// detached (connection threads, which the server counts instead). Public for the test servers of other
/// modules, which block in `accept`/`read` the same way.
public struct JoinableThread: Sendable {
    /// `pthread_create` failed with `code` (`EAGAIN`: the process or system is out of threads).
    public struct StartFailure: Error, Sendable, CustomStringConvertible {
        public let code: Int32
        public var description: String { "cannot start a thread: \(String(cString: strerror(code)))" }
    }

    private let thread: pthread_t

    /// The name every thread of the server carries (`/proc/PID/task/*/comm`, `top -H`), so a person or a test
    /// can tell them from the rest of the process's threads.
    public static let name = "embedded-http"

    /// Starts a thread named `name` (at most 15 bytes reach the kernel) running `body`; throws with the
    /// `pthread_create` error when none can be made.
    public static func start(
        name: String = JoinableThread.name, _ body: @escaping @Sendable () -> Void
    ) throws(StartFailure) -> JoinableThread {
        final class Box: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box {
            Thread.current.name = name  // pthread_setname_np, which Swift's Glibc does not show
            body()
        }).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            Unmanaged<Box>.fromOpaque(argument).takeRetainedValue().body()
            return nil
        }, box)
        guard result == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw StartFailure(code: result)
        }
        return JoinableThread(thread: thread)
    }

    /// Starts a detached thread running `body`: nobody joins it, and the kernel frees it when it returns. For
    /// connection threads, whose number the server counts instead (``HTTPServer`` waits for that count to reach
    /// zero): a joinable thread nobody joins stays a zombie, and a server nobody stops never would.
    static func startDetached(_ body: @escaping @Sendable () -> Void) throws(StartFailure) {
        let thread = try start(body)
        _ = pthread_detach(thread.thread)
    }

    /// Waits for the thread to end.
    public func join() {
        _ = pthread_join(thread, nil)
    }
}
