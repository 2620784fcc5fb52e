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
    /// (the agent does), so a watcher's thread is checked by its own name, and process-wide counts are
    /// taken only in exit tests, child processes of their own.
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

        /// Counts every inotify descriptor of the process, so it runs in a child process of its own (an exit
        /// test), where no other test's agent opens one; the child says what it found on stderr and exits 1 when
        /// an attempt left one (before, counted beside the other suites, it allowed 10 of 40).
        @Test("a failed start leaves nothing open")
        func failedStartLeaksNothing() async throws {
            let result = try #require(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    let dir = try WatchScratchDirectory()
                    let before = ProcessResources.current()
                    var refused = 0
                    for _ in 0..<40 {
                        do { _ = try DirectoryWatcher(path: dir.file("missing")) } catch is WatchError { refused += 1 }
                    }
                    let after = ProcessResources.current()
                    FileHandle.standardError.write(Data("refused \(refused) of 40, before \(before), after \(after)\n".utf8))
                    if refused != 40 || after.inotifyDescriptors > before.inotifyDescriptors { exit(1) }
                })
            #expect(result.exitStatus == .exitCode(0), "\(String(decoding: result.standardErrorContent, as: UTF8.self))")
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

        /// Counts every inotify and event descriptor and every watcher thread of the process, so it runs in a
        /// child process of its own (an exit test), where no other test's agent opens any; the child says what it
        /// found on stderr and exits 1 when the cycles left any (before, counted beside the other suites, it
        /// allowed 25 of 50).
        @Test("50 start/stop cycles leak no descriptors or threads")
        func noLeaks() async throws {
            let result = try #require(
                await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                    let dir = try WatchScratchDirectory()
                    // Warm up once: the first watcher loads what the process keeps (the cooperative pool's
                    // threads for the recorder).
                    try await Lifecycle.cycle(dir, index: -1)
                    let before = ProcessResources.current()
                    for index in 0..<50 { try await Lifecycle.cycle(dir, index: index) }
                    let after = await ProcessResources.settle {
                        $0.inotifyDescriptors <= before.inotifyDescriptors && $0.eventDescriptors <= before.eventDescriptors
                            && $0.watcherThreads <= before.watcherThreads
                    }
                    let report = "before \(before) watchers=\(before.watcherThreads), after \(after) watchers=\(after.watcherThreads)\n"
                    FileHandle.standardError.write(Data(report.utf8))
                    if after.inotifyDescriptors > before.inotifyDescriptors || after.eventDescriptors > before.eventDescriptors
                        || after.watcherThreads > before.watcherThreads
                    {
                        exit(1)
                    }
                })
            #expect(result.exitStatus == .exitCode(0), "\(String(decoding: result.standardErrorContent, as: UTF8.self))")
        }

        /// One start/stop with an event in between, so the reader has really run; checks that this
        /// watcher's own thread is gone afterwards.
        fileprivate static func cycle(_ dir: WatchScratchDirectory, index: Int) async throws {
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
