@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `status` and `purge` ask who holds the lock without taking it, so an agent starting at that instant never
/// fails with "locked" because of them.
@Suite(.timeLimit(.minutes(2)))
struct LockProbeTests {
    /// The prober runs on a thread of its own, and the starts go on until at least 4,000 have run and 1,000 probes
    /// came while they did: the overlap is counted, not left to how a loaded machine schedules the two (before,
    /// a detached task that a busy cooperative pool had not started yet probed nothing).
    @Test func probesWhileAgentsStartAndStopNeverMakeAStartFail() async throws {
        let dir = TemporaryDirectory("lock-probe")
        let path = dir.file("lock")
        let done = Shared(false)
        let probes = Shared(0)
        let prober = Task {
            try await onOwnThread {
                var sawHolder = 0
                while !done.value {
                    if DirectoryLock.holder(path: path) != nil { sawHolder += 1 }
                    probes.increment()
                }
                return sawHolder
            }
        }
        try #require(await eventually { probes.value > 0 }, "the prober never ran")
        let probesBefore = probes.value
        var starts = 0
        var refused = 0
        var other: [String] = []
        while starts < 4000 || probes.value - probesBefore < 1000 {
            do {
                let lock = try DirectoryLock.acquire(path: path)
                lock.release()
            } catch where error.code == .locked {
                refused += 1
            } catch {
                other.append(String(describing: error))
            }
            starts += 1
        }
        done.set(true)
        let sawHolder = try await prober.value
        let overlapping = probes.value - probesBefore
        #expect(refused == 0, "\(refused) of \(starts) starts failed with locked while \(overlapping) probes ran (\(sawHolder) saw a holder)")
        #expect(other.isEmpty, "\(other.prefix(3))")
    }

    @Test func theHolderIsReportedWhileHeldAndTheFileOutlivesIt() throws {
        let dir = TemporaryDirectory("lock-holder")
        let path = dir.file("lock")
        #expect(DirectoryLock.holder(path: path) == nil)
        let lock = try DirectoryLock.acquire(path: path)
        #expect(DirectoryLock.holder(path: path) == getpid())
        #expect(throws: SyncError.self) { _ = try DirectoryLock.acquire(path: path) }
        lock.release()
        #expect(DirectoryLock.holder(path: path) == nil)
        #expect(FileManager.default.fileExists(atPath: path), "the lock file is never deleted")
        let again = try DirectoryLock.acquire(path: path)
        again.release()
    }
}
