import CShims
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The global actor that owns the agent's state: the memory layer and loads in flight (`ImageLoader`), the
/// `AssetIndex` that is the stored-images index and the ownership record, the `GroupCommitter`, the feed catalogue,
/// the repair queue (`MirrorKeeper`) and the counters (the book's `ImageDatabase` silo, renamed). docs/ARCHITECTURE.md
/// lists which type owns what.
///
/// Types that only ever work with that state are annotated `@SyncActor` instead of being actors of their
/// own, so they share one serial executor and never hop between each other: a memory or disk hit is answered
/// without leaving it, a batch of a pass at a time. Heavy work (fetching, PNG validation, hashing, writing
/// and flushing new files) does not happen on it: it runs on the transfer thread and the blocking-I/O pool,
/// and the actor only decides before and commits after, re-checking its state after every `await` because it
/// is reentrant.
///
/// Its executor is an ordinary actor's (jobs run on Swift's cooperative pool, and a task that finds the silo free
/// runs on it without a thread switch), borrowed from a private actor. With `EMOJIART_SYNC_COUNT_SILO_JOBS=1` in
/// the environment at start it is a `CountingSiloExecutor` instead, which counts every job that enters the silo:
/// how a test measures the executor switches a miss or a pass costs, without a counter the code under test keeps.
@globalActor
public actor SyncActor {
    public static let shared = SyncActor()

    /// The ordinary actor whose executor the silo uses when nothing counts.
    private actor Silo {}
    private nonisolated let silo = Silo()

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        if let counting = CountingSiloExecutor.shared { return counting.asUnownedSerialExecutor() }
        return silo.unownedExecutor
    }

    /// Jobs that entered the silo since the process started, when they are counted
    /// (`EMOJIART_SYNC_COUNT_SILO_JOBS=1`); nil otherwise.
    nonisolated static var jobsEntered: Int? { CountingSiloExecutor.shared?.jobsEntered }
}

/// A serial executor on a thread of its own (`emojiart-silo`) that counts the jobs it is given. Only for
/// measuring (see `SyncActor`): every job is a real switch onto the silo, where the ordinary executor lets a free
/// silo run a task in place, so it is slower and never the default.
final class CountingSiloExecutor: SerialExecutor {
    /// The executor, made at the first use of the silo when the environment asks for it.
    static let shared: CountingSiloExecutor? = getenv("EMOJIART_SYNC_COUNT_SILO_JOBS").map { String(cString: $0) } == "1"
        ? CountingSiloExecutor() : nil

    private let runner = BlockingThreadPool(threads: 1, name: "emojiart-silo")
    private let entered = Atomic<Int>(0)
    /// The silo thread, set by its first job; `checkIsolated` compares with it.
    private let thread = Atomic<UInt>(0)

    var jobsEntered: Int { entered.load(ordering: .relaxed) }

    func enqueue(_ job: consuming ExecutorJob) {
        entered.add(1, ordering: .relaxed)
        let job = UnownedJob(job)
        let executor = asUnownedSerialExecutor()
        runner.submit { [self] in
            thread.store(UInt(pthread_self()), ordering: .relaxed)
            job.runSynchronously(on: executor)
        }
    }

    func checkIsolated() {
        precondition(thread.load(ordering: .relaxed) == UInt(pthread_self()), "not on the silo's thread")
    }
}
