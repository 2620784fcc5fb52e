#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A joinable POSIX thread running a closure, for test servers that block in `accept`/`read`.
///
/// Joinable (not detached) so a server's `stop()` can wait for every thread it started: the
/// resource-leak test counts threads and must not see a server's leftovers.
struct TestThread: Sendable {
    private let thread: pthread_t

    /// `pthread_create` failed with `code`; thrown so that only the test that asked fails, not the whole run.
    struct SpawnFailure: Error {
        let code: Int32
    }

    /// Starts a thread running `body`.
    static func spawn(_ body: @escaping @Sendable () -> Void) throws(SpawnFailure) -> TestThread {
        final class Box: Sendable {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            Unmanaged<Box>.fromOpaque(argument).takeRetainedValue().body()
            return nil
        }, box)
        guard result == 0 else {
            Unmanaged<Box>.fromOpaque(box).release()
            throw SpawnFailure(code: result)
        }
        return TestThread(thread: thread)
    }

    /// Waits for the thread to end (`pthread_join`).
    func join() {
        _ = pthread_join(thread, nil)
    }
}
