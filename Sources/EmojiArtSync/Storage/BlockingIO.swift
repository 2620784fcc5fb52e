/// Where blocking file work runs: writing a large new file, `fsync`, reading a whole file to verify or hash it,
/// `fsync` of the directory. (A fetched body is written to its temporary file as it arrives, on the HTTP client's
/// thread: `StreamedBodyFile`.) It goes to a thread pool of its own (``BlockingThreadPool``), so it never holds the
/// `SyncActor` nor one of the threads of Swift's cooperative pool, which has only as many threads as cores: on
/// a 2-core machine one `fsync` there would stall half of the agent, a repair included.
///
/// The pool has more threads than cores on purpose: its threads mostly wait for the disk, and `fsync`s that
/// are in flight together are committed together by the file system's journal.
///
/// Work asked for by a task of `.high` priority or above (the watcher's repairs: `WatchService`) is urgent: it
/// goes before the queued work of a pass, as the silo and the cooperative pool run such a task's jobs first.
enum BlockingIO {
    static let threads = 8

    private static let pool = BlockingThreadPool(threads: threads, name: "emojiart-io")

    /// Runs `body` on the blocking-I/O pool and returns its result (or rethrows its error). The caller's isolation
    /// is kept (`#isolation`): called from the silo, the task goes silo → io → silo, two switches, not through the
    /// cooperative pool on the way out and back.
    static func run<T: Sendable>(
        isolation: isolated (any Actor)? = #isolation, _ body: @escaping @Sendable () throws -> T
    ) async throws -> T {
        let urgent = isUrgent
        return try await withCheckedThrowingContinuation(isolation: isolation) { continuation in
            pool.submit(urgent: urgent) { continuation.resume(with: Result(catching: body)) }
        }
    }

    /// Whether work the current task asks for goes before the pool's other work (see the type's comment).
    static var isUrgent: Bool { Task.currentPriority >= .high }

    /// Queues `work` on the blocking-I/O pool without waiting for it.
    static func submit(_ work: @escaping @Sendable () -> Void) {
        pool.submit(work)
    }

    /// Runs a body that cannot fail on the blocking-I/O pool, keeping the caller's isolation.
    static func run<T: Sendable>(
        isolation: isolated (any Actor)? = #isolation, _ body: @escaping @Sendable () -> T
    ) async -> T {
        let urgent = isUrgent
        return await withCheckedContinuation(isolation: isolation) { continuation in
            pool.submit(urgent: urgent) { continuation.resume(returning: body()) }
        }
    }
}
