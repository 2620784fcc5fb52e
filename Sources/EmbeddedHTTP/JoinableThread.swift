import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A POSIX thread running a closure: joinable (the accepting thread, which `HTTPServer.stop()` joins), or
/// detached (connection threads, which the server counts instead).
struct JoinableThread: Sendable {
    private let thread: pthread_t

    /// The name every thread of the server carries (`/proc/PID/task/*/comm`, `top -H`), so a person or a test
    /// can tell them from the rest of the process's threads.
    static let name = "embedded-http"

    /// Starts a thread running `body`; throws with the `pthread_create` error when none can be made.
    static func start(_ body: @escaping @Sendable () -> Void) throws(HTTPServerError) -> JoinableThread {
        final class Box: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            Thread.current.name = JoinableThread.name  // pthread_setname_np, which Swift's Glibc does not show
            Unmanaged<Box>.fromOpaque(argument).takeRetainedValue().body()
            return nil
        }, box)
        guard result == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw HTTPServerError(.cannotListen, "cannot start a thread: \(String(cString: strerror(result)))")
        }
        return JoinableThread(thread: thread)
    }

    /// Starts a detached thread running `body`: nobody joins it, and the kernel frees it when it returns. For
    /// connection threads, whose number the server counts instead (``HTTPServer`` waits for that count to reach
    /// zero): a joinable thread nobody joins stays a zombie, and a server nobody stops never would.
    static func startDetached(_ body: @escaping @Sendable () -> Void) throws(HTTPServerError) {
        let thread = try start(body)
        _ = pthread_detach(thread.thread)
    }

    /// Waits for the thread to end.
    func join() {
        _ = pthread_join(thread, nil)
    }
}
