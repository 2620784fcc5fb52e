@testable import EmojiArtSync
import POSIXThreads
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `retryingInterrupts` and `systemCall` (Support/SystemCall.swift): a call a signal interrupts is made again,
/// and any other failure names the call, the errno and the path.
@Suite(.timeLimit(.minutes(1)))
struct SystemCallTests {
    /// A thread blocked in `read` on an empty pipe gets `SIGURG` (a handler without `SA_RESTART`, so the kernel
    /// ends the `read` with `EINTR`) until the read has been made twice; then a byte arrives and the one call
    /// returns it. Without the retry the first `EINTR` would be the answer.
    @Test func aReadInterruptedBySignalsIsMadeAgainAndReturnsTheByte() async throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { _ = close(readEnd); _ = close(writeEnd) }
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in }
        sigemptyset(&action.sa_mask)
        action.sa_flags = 0  // no SA_RESTART: a blocked read fails with EINTR
        var previous = sigaction()
        #expect(sigaction(SIGURG, &action, &previous) == 0)
        defer { _ = sigaction(SIGURG, &previous, nil) }

        let reader = Mutex<pthread_t?>(nil)
        let reads = Atomic<Int>(0)
        let outcome = Mutex<Result<Int, SystemCallFailure>?>(nil)
        let thread = try JoinableThread.start(name: "eintr-test") {
            // Threads made from the concurrency pool's (dispatch) threads inherit a mask that blocks signals.
            var urgent = sigset_t()
            sigemptyset(&urgent)
            sigaddset(&urgent, SIGURG)
            _ = pthread_sigmask(SIG_UNBLOCK, &urgent, nil)
            reader.withLock { $0 = pthread_self() }
            var byte: UInt8 = 0
            let result = Result { () throws(SystemCallFailure) in
                try retryingInterrupts { () -> Int in
                    reads.add(1, ordering: .relaxed)
                    return read(readEnd, &byte, 1)
                }
            }
            outcome.withLock { $0 = result }
        }
        // A signal that lands before the thread is in read interrupts nothing; send until a read was made again.
        let interrupted = await eventually {
            if let thread = reader.withLock({ $0 }) { _ = pthread_kill(thread, SIGURG) }
            return reads.load(ordering: .relaxed) >= 2
        }
        var byte: UInt8 = 7
        #expect(write(writeEnd, &byte, 1) == 1)
        thread.join()
        #expect(interrupted, "the read was never made again after a signal")
        #expect(try outcome.withLock { $0 }?.get() == 1)
    }

    /// A failure other than EINTR is thrown at once, as a `SyncError` naming the call, the errno and the path.
    @Test func aFailureNamesTheCallTheErrnoAndThePath() {
        var calls = 0
        do {
            _ = try systemCall("read", path: "/the/path", hint: "cannot read the file") { () -> Int in
                calls += 1
                return read(-1, nil, 0)
            }
            Issue.record("a read of descriptor -1 succeeded")
        } catch {
            #expect(calls == 1)
            #expect(error.call == "read" && error.errnoValue == EBADF && error.path == "/the/path")
            #expect(error.message == "cannot read the file: /the/path: Bad file descriptor (read, errno \(EBADF))")
        }
    }
}
