#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The dedicated POSIX thread a ``CurlMultiLoop`` runs on (`pthread_create`, `pthread_join`).
///
/// A thread of its own, not a task: `curl_multi_poll` blocks, and blocking calls must stay off
/// Swift's cooperative pool. A joinable pthread rather than Foundation's `Thread` so that
/// shutdown can wait for it to end (`pthread_join`): after ``CurlHTTPClient/shutdown()``
/// returns, the thread, its sockets and its libcurl handles are gone, which tests can check.
struct CurlLoopThread: Sendable {
    /// The thread (`pthread_t`).
    private let thread: pthread_t

    /// Starts a thread that runs `loop` until it stops.
    ///
    /// The caller hands `loop` over: it must not touch it again. The loop is passed as a raw
    /// pointer retained once, and the new thread takes that retain over.
    static func start(_ loop: consuming CurlMultiLoop) throws(HTTPClientError) -> CurlLoopThread {
        let box = Unmanaged.passRetained(loop).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let loop = Unmanaged<CurlMultiLoop>.fromOpaque(argument).takeRetainedValue()
            loop.run()
            return nil
        }, box)
        guard result == 0 else {
            Unmanaged<CurlMultiLoop>.fromOpaque(box).release()
            throw HTTPClientError(
                kind: .transport, url: "", message: "could not start the HTTP client's thread",
                call: "pthread_create", systemErrno: result)
        }
        return CurlLoopThread(thread: thread)
    }

    /// Waits until the thread has ended (`pthread_join`). If called on the loop thread itself,
    /// which would deadlock, detaches it instead (`pthread_detach`): it ends on its own.
    func join() {
        if pthread_equal(thread, pthread_self()) != 0 {
            _ = pthread_detach(thread)
        } else {
            _ = pthread_join(thread, nil)
        }
    }
}
