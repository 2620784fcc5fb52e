@testable import EmojiArtSync
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension WatchTests {
    /// What happens to files inside DIR arrives as events naming them: real inotify, real files.
    @Suite("DirectoryWatcher: file events")
    struct FileEvents {
        @Test("create, write, close: create and closeWrite with the name")
        func createWriteClose() async throws {
            let dir = try WatchScratchDirectory()
            let watcher = try DirectoryWatcher(path: dir.path)
            defer { watcher.stop() }
            let recorder = WatchRecorder(watcher.events)

            try POSIX.write(Array("hello".utf8), to: dir.file("a.png"))

            let seen = await recorder.wait(for: "create and closeWrite of a.png") {
                $0.contains(.create, "a.png") && $0.contains(.closeWrite, "a.png")
            }
            let names = Set(seen.events.map(\.name))
            #expect(names == ["a.png"])
            let create = seen.events.firstIndex { $0.mask.contains(.create) }
            let closeWrite = seen.events.firstIndex { $0.mask.contains(.closeWrite) }
            #expect(create != nil && closeWrite != nil && create! < closeWrite!, "kernel order kept: \(seen.events)")
        }

        /// `sifting` sees each batch on the reader thread as it is read, with no task reading the stream yet (the
        /// agent's rename gate hears of a deletion while the cooperative pool is busy with a sync's jobs), and the
        /// stream carries what it keeps. Before, the gate heard of events only when a task on the pool took them
        /// from the stream: during a cold sync, dozens of renames into DIR came after `rm -rf DIR` had listed it.
        @Test("sifting: on the reader thread, before any task reads; the stream carries what it keeps")
        func sifting() async throws {
            let dir = try WatchScratchDirectory()
            try POSIX.write(Array("x".utf8), to: dir.file("kept.png"))
            try POSIX.write(Array("x".utf8), to: dir.file("dropped.png"))
            let sifted = Mutex<[(name: String?, thread: String)]>([])
            let watcher = try DirectoryWatcher(path: dir.path, sifting: { batch in
                let thread = Self.currentThreadName()
                sifted.withLock { $0.append(contentsOf: batch.map { ($0.name, thread) }) }
                return batch.filter { $0.name != "dropped.png" }
            })
            defer { watcher.stop() }

            try POSIX.unlink(dir.file("dropped.png"))
            try POSIX.unlink(dir.file("kept.png"))
            let both = await eventually {
                Set(sifted.withLock { $0.compactMap(\.name) }).isSuperset(of: ["kept.png", "dropped.png"])
            }
            #expect(both, "the stream was not read yet: \(sifted.withLock { $0.map(\.name) })")
            #expect(sifted.withLock { $0.allSatisfy { $0.thread == watcher.threadName } }, "on \(watcher.threadName)")

            let recorder = WatchRecorder(watcher.events)
            let seen = await recorder.wait(for: "the delete of kept.png") { $0.contains(.delete, "kept.png") }
            #expect(!seen.events.contains { $0.name == "dropped.png" }, "\(seen.events)")
        }

        /// The calling thread's name, as the kernel keeps it (`/proc/thread-self/comm`).
        static func currentThreadName() -> String {
            let fd = open("/proc/thread-self/comm", O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { return "" }
            defer { close(fd) }
            var bytes = [UInt8](repeating: 0, count: 64)
            let count = read(fd, &bytes, bytes.count)
            return String(decoding: bytes.prefix(max(0, count)).filter { $0 != 0x0A }, as: UTF8.self)
        }

        @Test("unlink: delete with the name")
        func delete() async throws {
            let dir = try WatchScratchDirectory()
            try POSIX.write(Array("x".utf8), to: dir.file("gone.png"))
            let watcher = try DirectoryWatcher(path: dir.path)
            defer { watcher.stop() }
            let recorder = WatchRecorder(watcher.events)

            try POSIX.unlink(dir.file("gone.png"))

            await recorder.wait(for: "delete of gone.png") { $0.contains(.delete, "gone.png") }
            #expect(!recorder.snapshot.finished, "deleting a file must not end the watch")
        }

        @Test("rename inside DIR: movedFrom and movedTo with the same cookie")
        func renameInside() async throws {
            let dir = try WatchScratchDirectory()
            try POSIX.write(Array("x".utf8), to: dir.file("a.png"))
            let watcher = try DirectoryWatcher(path: dir.path)
            defer { watcher.stop() }
            let recorder = WatchRecorder(watcher.events)

            try POSIX.rename(dir.file("a.png"), dir.file("b.png"))

            let seen = await recorder.wait(for: "movedFrom a.png and movedTo b.png") {
                $0.contains(.movedFrom, "a.png") && $0.contains(.movedTo, "b.png")
            }
            let from = try #require(seen.events.first { $0.mask.contains(.movedFrom) })
            let to = try #require(seen.events.first { $0.mask.contains(.movedTo) })
            #expect(from.cookie != 0)
            #expect(from.cookie == to.cookie)
        }

        @Test("a file renamed in from another directory: movedTo")
        func movedInFromOutside() async throws {
            let dir = try WatchScratchDirectory()
            let outside = try WatchScratchDirectory("watch-outside")
            try POSIX.write(Array("x".utf8), to: outside.file("new.png"))
            let watcher = try DirectoryWatcher(path: dir.path)
            defer { watcher.stop() }
            let recorder = WatchRecorder(watcher.events)

            try POSIX.rename(outside.file("new.png"), dir.file("gallery_image_3.png"))

            let seen = await recorder.wait(for: "movedTo gallery_image_3.png") {
                $0.contains(.movedTo, "gallery_image_3.png")
            }
            #expect(!seen.events.contains { $0.mask.contains(.movedFrom) }, "the other half is not in DIR")
        }

        @Test("a file renamed out of DIR: movedFrom")
        func movedAway() async throws {
            let dir = try WatchScratchDirectory()
            let outside = try WatchScratchDirectory("watch-outside")
            try POSIX.write(Array("x".utf8), to: dir.file("a.png"))
            let watcher = try DirectoryWatcher(path: dir.path)
            defer { watcher.stop() }
            let recorder = WatchRecorder(watcher.events)

            try POSIX.rename(dir.file("a.png"), outside.file("a.png"))

            await recorder.wait(for: "movedFrom a.png") { $0.contains(.movedFrom, "a.png") }
        }

        @Test("a file replaced by rename over it: movedTo, no delete")
        func replacedByRename() async throws {
            let dir = try WatchScratchDirectory()
            try POSIX.write(Array("old".utf8), to: dir.file("a.png"))
            try POSIX.mkdir(dir.file(".emojiart-sync"))
            try POSIX.write(Array("new".utf8), to: dir.file(".emojiart-sync/a.tmp"))
            let watcher = try DirectoryWatcher(path: dir.path)
            defer { watcher.stop() }
            let recorder = WatchRecorder(watcher.events)

            try POSIX.rename(dir.file(".emojiart-sync/a.tmp"), dir.file("a.png"))

            let seen = await recorder.wait(for: "movedTo a.png") { $0.contains(.movedTo, "a.png") }
            #expect(!seen.events.contains { $0.mask.contains(.delete) })
        }

        @Test("open with O_TRUNC: modify and closeWrite")
        func truncate() async throws {
            let dir = try WatchScratchDirectory()
            try POSIX.write(Array(repeating: 7, count: 4096), to: dir.file("a.png"))
            let watcher = try DirectoryWatcher(path: dir.path)
            defer { watcher.stop() }
            let recorder = WatchRecorder(watcher.events)

            try POSIX.write([], to: dir.file("a.png"), flags: O_WRONLY | O_TRUNC)

            await recorder.wait(for: "modify and closeWrite of a.png") {
                $0.contains(.modify, "a.png") && $0.contains(.closeWrite, "a.png")
            }
        }

        @Test("overwritten in place, no truncation: modify and closeWrite")
        func overwriteInPlace() async throws {
            let dir = try WatchScratchDirectory()
            try POSIX.write(Array(repeating: 7, count: 4096), to: dir.file("a.png"))
            let watcher = try DirectoryWatcher(path: dir.path)
            defer { watcher.stop() }
            let recorder = WatchRecorder(watcher.events)

            try POSIX.write([0, 0, 0, 0], to: dir.file("a.png"), flags: O_WRONLY)

            let seen = await recorder.wait(for: "modify and closeWrite of a.png") {
                $0.contains(.modify, "a.png") && $0.contains(.closeWrite, "a.png")
            }
            #expect(!seen.events.contains { $0.mask.contains(.create) }, "no new file: \(seen.events)")
        }

        @Test("chmod: attrib")
        func chmod() async throws {
            let dir = try WatchScratchDirectory()
            try POSIX.write(Array("x".utf8), to: dir.file("a.png"))
            let watcher = try DirectoryWatcher(path: dir.path)
            defer { watcher.stop() }
            let recorder = WatchRecorder(watcher.events)

            try POSIX.chmod(dir.file("a.png"), 0o600)

            await recorder.wait(for: "attrib of a.png") { $0.contains(.attrib, "a.png") }
        }

        @Test("work inside a subdirectory names nothing inside it")
        func subdirectoryIsInvisible() async throws {
            let dir = try WatchScratchDirectory()
            try POSIX.mkdir(dir.file(".emojiart-sync"))
            try POSIX.mkdir(dir.file(".emojiart-sync/tmp"))
            let watcher = try DirectoryWatcher(path: dir.path)
            defer { watcher.stop() }
            let recorder = WatchRecorder(watcher.events)

            try POSIX.write(Array(repeating: 1, count: 1000), to: dir.file(".emojiart-sync/tmp/x"))
            try POSIX.chmod(dir.file(".emojiart-sync/tmp/x"), 0o600)
            try POSIX.rename(dir.file(".emojiart-sync/tmp/x"), dir.file(".emojiart-sync/tmp/y"))
            try POSIX.unlink(dir.file(".emojiart-sync/tmp/y"))
            // Events arrive in order: once the marker's are in, any event for x or y would be too.
            try POSIX.write(Array("m".utf8), to: dir.file("marker"))

            let seen = await recorder.wait(for: "closeWrite of marker") { $0.contains(.closeWrite, "marker") }
            let names = Set(seen.events.compactMap(\.name))
            #expect(names.isSubset(of: ["marker", ".emojiart-sync"]), "saw \(seen.events)")
        }

        @Test("2,000 files deleted at once: few batches, every name (or an overflow)")
        func burst() async throws {
            let count = 2_000
            let dir = try WatchScratchDirectory()
            let names = (0..<count).map { "gallery_image_\($0).png" }
            for name in names { try POSIX.write([], to: dir.file(name)) }
            let watcher = try DirectoryWatcher(path: dir.path)
            defer { watcher.stop() }
            let recorder = WatchRecorder(watcher.events)

            for name in names { try POSIX.unlink(dir.file(name)) }

            let expected = Set(names)
            let seen = await recorder.wait(for: "delete of all \(count) files, or an overflow") { snapshot in
                let events = snapshot.events
                return events.contains(where: \.isOverflow)
                    || expected.isSubset(of: events.filter { $0.mask.contains(.delete) }.compactMap(\.name))
            }
            let deleted = seen.events.filter { $0.mask.contains(.delete) }.compactMap(\.name)
            if !seen.events.contains(where: \.isOverflow) {
                #expect(deleted.count == count, "each delete exactly once")
                #expect(deleted == names, "in the order of the unlinks")
            }
            // One element per read(2), and a read takes everything queued since the last one. How much that
            // is depends on how fast the reader thread gets the CPU back (typically 160 to 350 batches for
            // 2,000 deletes on a busy 2-core machine, but 1,330 seen when the deleting thread had a core of its
            // own), so the bound is loose; one element per event fails it.
            #expect(seen.batches.count < count, "\(seen.batches.count) batches for \(count) events")
            let largest = seen.batches.map(\.count).max() ?? 0
            #expect(largest > 1, "batches hold more than one event")
        }
    }
}
