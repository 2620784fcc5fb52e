import Synchronization

/// What a test may make happen inside one agent's file decisions, at the exact moment that matters: a path whose
/// `lstat` fails, an action between a removal's decision and its taking of the file. Injected per agent
/// (`AgentConfiguration.storageTestHooks`, internal), never process-global; an agent without them pays a nil
/// check per call.
final class StorageTestHooks: Sendable {
    private let failingStatus = Mutex<[String: Int32]>([:])
    private let beforeTaking = Mutex<(@Sendable (String) -> Void)?>(nil)
    private let directoryFlushFailure = Mutex<Int32?>(nil)

    init() {}

    /// From now on `lstat` of `path` fails with `errno` (nil: succeeds again).
    func failStatus(of path: String, with errno: Int32?) {
        failingStatus.withLock { $0[path] = errno }
    }

    /// The errno `lstat` of `path` fails with, if a test asked for one.
    func statusFailure(of path: String) -> Int32? {
        failingStatus.withLock { $0[path] }
    }

    /// From now on `fsync` of DIR fails with `errno` (nil: succeeds again), as on a disk that reports an I/O error.
    func failDirectoryFlush(with errno: Int32?) {
        directoryFlushFailure.withLock { $0 = errno }
    }

    var directoryFlushError: Int32? { directoryFlushFailure.withLock { $0 } }

    /// Runs `hook` with the asset path each time a removal has decided to remove a file, just before it takes it.
    func setBeforeTaking(_ hook: (@Sendable (String) -> Void)?) {
        beforeTaking.withLock { $0 = hook }
    }

    func runBeforeTaking(_ path: String) {
        beforeTaking.withLock { $0 }?(path)
    }
}
