@testable import EmojiArtSync
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension WatchTests {
    /// Regression: the agent used to call the blocking `stop()` from a task cancellation handler. While
    /// events kept coming, the reader thread could be inside `yield`, resuming that very task, which needs the
    /// task's status lock that the handler holds: `stop()` joined a thread that waited for it, forever.
    /// `requestStop()` in the handler plus `stop()` after the loop must end every time.
    @Suite("DirectoryWatcher: cancellation under load")
    struct Cancellation {
        @Test(.timeLimit(.minutes(1)))
        func cancellingAConsumerDuringAnEventFloodNeverHangs() async throws {
            let scratch = try WatchScratchDirectory("cancel")
            let flooding = Atomic<Bool>(true)
            let path = scratch.path
            let writer = Thread {
                var i = 0
                while flooding.load(ordering: .relaxed) {
                    let file = path + "/f\(i % 50)"
                    let fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                    if fd >= 0 { close(fd) }
                    i += 1
                }
            }
            writer.start()
            defer { flooding.store(false, ordering: .relaxed) }
            for round in 0..<20 {
                let watcher = try DirectoryWatcher(path: path)
                let consumer = Task {
                    var batches = 0
                    await withTaskCancellationHandler {
                        for await _ in watcher.events { batches += 1 }
                    } onCancel: {
                        watcher.requestStop()
                    }
                    watcher.stop()
                    return batches
                }
                try await Task.sleep(for: .milliseconds(20))
                consumer.cancel()
                let finished = await withTaskGroup(of: Bool.self) { group in
                    group.addTask { _ = await consumer.value; return true }
                    group.addTask { try? await Task.sleep(for: .seconds(10)); return false }
                    let first = await group.next() ?? false
                    group.cancelAll()
                    return first
                }
                #expect(finished, "round \(round): the consumer did not finish after cancellation")
                if !finished { return }
            }
        }
    }
}
