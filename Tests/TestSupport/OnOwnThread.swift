import POSIXThreads

/// Runs blocking `work` (a raw socket's reads, a pipe) on a thread of its own, named `test-blocking`, and returns
/// its result: the cooperative pool stays free for the in-process servers the work talks to.
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        do {
            try JoinableThread.startDetached(name: "test-blocking") {
                continuation.resume(with: Result { try work() })
            }
        } catch {
            continuation.resume(throwing: error)
        }
    }
}
