@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension WatchTests {
    /// Starting, ending and stopping: DIR going away, bad paths, stop, release, leaks.
    ///
    /// Other folders' suites run in this process at the same time and may run watchers of their own
    /// (the agent does), so a watcher's thread is checked by its own name, and process-wide counts
    /// only have to stay well below one leaked item per cycle.
    @Suite("DirectoryWatcher: lifecycle")
    struct Lifecycle {
        @Test("DIR removed: deleteSelf or ignored, then the stream finishes on its own")
        func directoryRemoved() async throws {
            let parent = try WatchScratchDirectory()
            let path = parent.file("DIR")
            try POSIX.mkdir(path)
            try POSIX.write(Array("x".utf8), to: path + "/a.png")
            let watcher = try DirectoryWatcher(path: path)
            defer { watcher.stop() }
            let recorder = WatchRecorder(watcher.events)

            try POSIX.unlink(path + "/a.png")
            try POSIX.rmdir(path)

            let seen = await recorder.wait(for: "the stream to finish") { $0.finished }
            #expect(seen.contains(.delete, "a.png"))
            let last = try #require(seen.events.last)
            #expect(last.endsWatch, "the last event ends the watch: \(seen.events)")
            #expect(last.mask.contains(.deleteSelf) || last.mask.contains(.ignored))
            #expect(watcher.failure == nil)
            let after = await ProcessResources.settle { !$0.hasThread(named: watcher.threadName) }
            #expect(!after.hasThread(named: watcher.threadName), "the reader thread ended with the stream")
        }

        @Test("DIR renamed: moveSelf, and the stream finishes before stop")
        func directoryRenamed() async throws {
            let parent = try WatchScratchDirectory()
            let path = parent.file("DIR")
            try POSIX.mkdir(path)
            let watcher = try DirectoryWatcher(path: path)
            let recorder = WatchRecorder(watcher.events)

            try POSIX.rename(path, parent.file("DIR-moved"))

            let seen = await recorder.wait(for: "moveSelf and the end of the stream") {
                $0.finished && $0.contains(.moveSelf, nil)
            }
            #expect(seen.events.last?.endsWatch == true, "nothing after the end: \(seen.events)")
            // The kernel still holds the watch on the moved directory: stop removes it.
            watcher.stop()
            #expect(watcher.failure == nil)
        }

        @Test("a regular file: notADirectory")
        func notADirectory() throws {
            let dir = try WatchScratchDirectory()
            let file = dir.file("plain")
            try POSIX.write(Array("x".utf8), to: file)

            let error = #expect(throws: WatchError.self) { try DirectoryWatcher(path: file) }
            #expect(error?.kind == .notADirectory)
            #expect(error?.call == "inotify_add_watch")
            #expect(error?.errnoValue == ENOTDIR)
            #expect(error?.path == file)
            #expect(error?.message.contains(file) == true)
        }

        @Test("a missing path, or a missing parent: noSuchDirectory", arguments: ["missing", "missing/below"])
        func missing(relative: String) throws {
            let dir = try WatchScratchDirectory()
            let path = dir.file(relative)

            let error = #expect(throws: WatchError.self) { try DirectoryWatcher(path: path) }
            #expect(error?.kind == .noSuchDirectory)
            #expect(error?.errnoValue == ENOENT)
            #expect(error?.description.contains("inotify_add_watch, errno \(ENOENT)") == true)
        }

        @Test("a failed start leaves nothing open")
        func failedStartLeaksNothing() async throws {
            let attempts = 40
            let dir = try WatchScratchDirectory()
            let before = ProcessResources.current()
            for _ in 0..<attempts {
                #expect(throws: WatchError.self) { try DirectoryWatcher(path: dir.file("missing")) }
            }
            let after = ProcessResources.current()
            // A leak would add one inotify descriptor per attempt.
            #expect(after.inotifyDescriptors - before.inotifyDescriptors < attempts / 4, "before \(before), after \(after)")
        }

        @Test("stop while idle returns promptly, finishes the stream, and is idempotent from many threads")
        func stopWhileIdle() async throws {
            let dir = try WatchScratchDirectory()
            let watcher = try DirectoryWatcher(path: dir.path)
            let recorder = WatchRecorder(watcher.events)
            let running = await ProcessResources.settle { $0.hasThread(named: watcher.threadName) }
            #expect(running.hasThread(named: watcher.threadName), "the reader thread runs: \(running.threadNames)")
            // The reader parks in poll(2) with no timeout: a stop that did not wake it would hang until the suite's
            // time limit.
            #expect(await eventually { ProcessResources.isAsleep(threadNamed: watcher.threadName) }, "the reader parked")
            watcher.stop()
            // Stop from several threads at once, after the fact: each returns, nothing breaks.
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<4 { group.addTask { watcher.stop() } }
            }
            watcher.stop()

            await recorder.wait(for: "the stream to finish") { $0.finished }
            #expect(recorder.snapshot.events.isEmpty, "nothing happened in DIR: \(recorder.snapshot.events)")
            #expect(watcher.failure == nil)
            let after = await ProcessResources.settle { !$0.hasThread(named: watcher.threadName) }
            #expect(!after.hasThread(named: watcher.threadName), "stop joined the reader thread")
        }

        @Test("stop from several threads at once on a running watcher")
        func concurrentStops() async throws {
            let dir = try WatchScratchDirectory()
            let watcher = try DirectoryWatcher(path: dir.path)
            let recorder = WatchRecorder(watcher.events)
            let running = await ProcessResources.settle { $0.hasThread(named: watcher.threadName) }
            #expect(running.hasThread(named: watcher.threadName))

            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { watcher.stop() } }
            }

            await recorder.wait(for: "the stream to finish") { $0.finished }
            let after = await ProcessResources.settle { !$0.hasThread(named: watcher.threadName) }
            #expect(!after.hasThread(named: watcher.threadName))
        }

        @Test("releasing the watcher stops it")
        func releaseStops() async throws {
            let dir = try WatchScratchDirectory()
            var watcher: DirectoryWatcher? = try DirectoryWatcher(path: dir.path)
            let name = watcher!.threadName
            let recorder = WatchRecorder(watcher!.events)
            let running = await ProcessResources.settle { $0.hasThread(named: name) }
            #expect(running.hasThread(named: name))

            watcher = nil

            await recorder.wait(for: "the stream to finish") { $0.finished }
            let after = await ProcessResources.settle { !$0.hasThread(named: name) }
            #expect(!after.hasThread(named: name), "deinit joined the reader thread")
        }

        @Test("a consumer that stops iterating ends the reader thread without stop()")
        func consumerCancellation() async throws {
            let dir = try WatchScratchDirectory()
            let watcher = try DirectoryWatcher(path: dir.path)
            defer { watcher.stop() }
            let consumer = Task {
                var batches = 0
                for await _ in watcher.events { batches += 1 }
                return batches
            }
            let running = await ProcessResources.settle { $0.hasThread(named: watcher.threadName) }
            #expect(running.hasThread(named: watcher.threadName))

            consumer.cancel()
            _ = await consumer.value

            let after = await ProcessResources.settle { !$0.hasThread(named: watcher.threadName) }
            #expect(!after.hasThread(named: watcher.threadName), "the reader thread ended on its own")
            #expect(watcher.failure == nil)
        }

        @Test("50 start/stop cycles leak no descriptors or threads")
        func noLeaks() async throws {
            let cycles = 50
            let dir = try WatchScratchDirectory()
            // Warm up once: the first watcher loads what the process keeps (the eventfd lookup, the
            // cooperative pool's threads for the recorder).
            try await cycle(dir, index: -1)
            let before = ProcessResources.current()

            for index in 0..<cycles { try await cycle(dir, index: index) }

            let after = await ProcessResources.settle {
                $0.inotifyDescriptors <= before.inotifyDescriptors && $0.watcherThreads <= before.watcherThreads
            }
            // A leak adds one per cycle: 50. Other suites' work in this process moves the counts by a
            // few, so each has to stay below half a leak per cycle. Counted by kind and by thread name only:
            // every descriptor and thread of the process would count the neighbours' too.
            let bound = cycles / 2
            #expect(after.inotifyDescriptors - before.inotifyDescriptors < bound, "before \(before), after \(after)")
            #expect(after.eventDescriptors - before.eventDescriptors < bound, "before \(before), after \(after)")
            #expect(after.watcherThreads - before.watcherThreads < bound, "before \(before), after \(after)")
        }

        /// One start/stop with an event in between, so the reader has really run; checks that this
        /// watcher's own thread is gone afterwards.
        private func cycle(_ dir: WatchScratchDirectory, index: Int) async throws {
            let watcher = try DirectoryWatcher(path: dir.path)
            let recorder = WatchRecorder(watcher.events)
            let name = "cycle-\(index)"
            try POSIX.write([], to: dir.file(name))
            await recorder.wait(for: "closeWrite of \(name)") { $0.contains(.closeWrite, name) }
            watcher.stop()
            await recorder.wait(for: "the stream to finish") { $0.finished }
            let after = await ProcessResources.settle { !$0.hasThread(named: watcher.threadName) }
            #expect(!after.hasThread(named: watcher.threadName), "cycle \(index): reader thread ended")
        }
    }
}
