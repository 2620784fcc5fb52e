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
    @Test func probesWhileAgentsStartAndStopNeverMakeAStartFail() async throws {
        let dir = TemporaryDirectory("lock-probe")
        let path = dir.file("lock")
        let done = Shared(false)
        let prober = Task.detached {
            var probes = 0
            var sawHolder = 0
            while !done.value {
                if DirectoryLock.holder(path: path) != nil { sawHolder += 1 }
                probes += 1
            }
            return (probes, sawHolder)
        }
        var refused = 0
        var other: [String] = []
        for _ in 0..<4000 {
            do {
                let lock = try DirectoryLock.acquire(path: path)
                lock.release()
            } catch where error.code == .locked {
                refused += 1
            } catch {
                other.append(String(describing: error))
            }
        }
        done.set(true)
        let (probes, sawHolder) = await prober.value
        #expect(refused == 0, "\(refused) of 4000 starts failed with locked while \(probes) probes ran (\(sawHolder) saw a holder)")
        #expect(other.isEmpty, "\(other.prefix(3))")
        #expect(probes > 0)
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
