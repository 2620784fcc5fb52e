import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--once --dry-run`, run as a person runs it (the real binary against the bundled gallery): it lists the
/// decisions the real run would act on, leaves DIR exactly as it was, state directory included, and exits as the
/// real run then does.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct DryRunTests {
    @Test func aDryRunOnAnEmptyDirectoryListsEveryAssetAsAFetchAndCreatesNothing() async throws {
        let out = TemporaryDirectory("dry-out")
        let gallery = try await GalleryFixture(count: 3)
        defer { Task { await gallery.stop() } }
        let dir = TemporaryDirectory("dry-empty")
        let never = dir.path + "/not-yet"
        for target in [dir.path, never] {
            let run = try await AgentProcess.run(
                ["--dir", target, "--server", gallery.baseURL, "--once", "--dry-run"], outputDirectory: out.path)
            #expect(run.status == ExitStatus.success.rawValue, "\(run.stderr)")
            #expect(run.stdout == """
                would-fetch gallery_image_1.png key=/gallery/image?1
                would-fetch gallery_image_2.png key=/gallery/image?2
                would-fetch gallery_image_3.png key=/gallery/image?3
                dry-run assets=3 unchanged=0 fetch=3 replace=0 adopt=0 refresh=0 remove=0 keep=0 conflict=0 refuse=0 exit=0

                """)
        }
        #expect(dir.names().isEmpty, "no state folder, no lock, no index: \(dir.names())")

        let usage = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--dry-run"], outputDirectory: out.path)
        #expect(usage.status == ExitStatus.usage.rawValue)
        #expect(usage.stderr.contains("--dry-run needs --once"), "\(usage.stderr)")
        // A flag only: the variable is refused, not ignored (a real run where a dry one was meant).
        let variable = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once"], outputDirectory: out.path,
            environment: ["EMOJIART_SYNC_DRY_RUN": "1"])
        #expect(variable.status == ExitStatus.usage.rawValue)
        #expect(variable.stderr.contains("EMOJIART_SYNC_DRY_RUN is not read"), "\(variable.stderr)")
        // --once from the environment is a one-shot run all the same.
        let once = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--dry-run"], outputDirectory: out.path,
            environment: ["EMOJIART_SYNC_ONCE": "1"])
        #expect(once.status == ExitStatus.success.rawValue, "\(once.stderr)")
        #expect(dir.names().isEmpty)
    }

    @Test func aDryRunAfterARealRunListsExactlyTheDamageAndTheRealRunThenDoesIt() async throws {
        let out = TemporaryDirectory("dry-out")
        let gallery = try await GalleryFixture(count: 5)
        defer { Task { await gallery.stop() } }
        let dir = TemporaryDirectory("dry-damaged")
        try await syncAsAUserWould(dir, from: gallery, output: out)
        unlink(dir.file("gallery_image_1.png"))
        try Data("not a png".utf8).write(to: URL(fileURLWithPath: dir.file("gallery_image_2.png")))
        // A person's file put over the agent's (another inode): replaced, and kept beside it.
        try Data("mine".utf8).write(to: URL(fileURLWithPath: dir.file("mine.png")))
        rename(dir.file("mine.png"), dir.file("gallery_image_4.png"))
        // The agent's exact bytes in a new file (a restore from a backup): adopted as it is.
        // (Written beside it, then renamed over it: a new inode while the old one still exists, never its number.)
        let five = try Data(contentsOf: URL(fileURLWithPath: dir.file("gallery_image_5.png")))
        try five.write(to: URL(fileURLWithPath: dir.file("restored.tmp")))
        rename(dir.file("restored.tmp"), dir.file("gallery_image_5.png"))
        var restored = stat()
        _ = lstat(dir.file("gallery_image_5.png"), &restored)
        gallery.server.setFaults(GalleryFaults(extraFeedURLs: ["/gallery/../etc/passwd"], droppedItems: [3]))

        let before = try DirectorySnapshot(dir.path)
        let run = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "--dry-run"], outputDirectory: out.path)
        let after = try DirectorySnapshot(dir.path)
        #expect(after == before, "names, inodes, sizes and mtimes, .emojiart-sync/ included: \(after.changes(since: before))")
        #expect(run.status == ExitStatus.partial.rawValue, "the refused item makes the real run partial: \(run.stderr)")
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.filter { !$0.hasPrefix("would-refuse") } == [
            "would-fetch gallery_image_1.png key=/gallery/image?1 reason=missing",
            "would-replace gallery_image_2.png key=/gallery/image?2 reason=corrupt",
            "would-replace gallery_image_4.png key=/gallery/image?4 reason=corrupt conflict_copy=gallery_image_4.conflict-YYYYMMDD-HHMMSS.png",
            "would-adopt gallery_image_5.png key=/gallery/image?5",
            "would-remove gallery_image_3.png key=/gallery/image?3",
            "dry-run assets=4 unchanged=0 fetch=1 replace=2 adopt=1 refresh=0 remove=1 keep=0 conflict=0 refuse=1 exit=2",
        ], "\(run.stdout)")
        #expect(lines.contains { $0.hasPrefix("would-refuse /gallery/../etc/passwd reason=") }, "\(run.stdout)")

        // The real run acts on exactly those decisions, and exits alike.
        let real = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path)
        #expect(real.status == run.status)
        let log = logLines(dir.path)
        for (event, key) in [("repair", "1"), ("repair", "2"), ("repair", "4"), ("remove", "3")] {
            #expect(log.contains { $0.contains("event=\(event)") && $0.contains("key=/gallery/image?\(key)") }, "\(event) \(key)")
        }
        #expect(dir.names().contains { $0.hasPrefix("gallery_image_4.conflict-") })
        #expect(!dir.names().contains("gallery_image_3.png"))
        var adopted = stat()
        _ = lstat(dir.file("gallery_image_5.png"), &adopted)
        #expect(adopted.st_ino == restored.st_ino, "adopted in place, not fetched again")
        // Done: a second dry run has nothing left to do but the item the feed itself refuses.
        let again = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "--dry-run"], outputDirectory: out.path)
        #expect(again.stdout.split(separator: "\n").map { $0.split(separator: " ").first ?? "" } == ["would-refuse", "dry-run"], "\(again.stdout)")
    }

    /// A run that ended without closing the index leaves rows in its write-ahead log: the dry run reads them
    /// (from a private copy), and the log and its `-shm` index in DIR stay exactly as they were.
    @Test(.enabled(if: RepositoryFiles.tool("python3") != nil, "python3 writes the log the way a killed run leaves it"))
    func aDryRunReadsTheWriteAheadLogAKilledRunLeftWithoutTouchingIt() async throws {
        let out = TemporaryDirectory("dry-out")
        let gallery = try await GalleryFixture(count: 2)
        defer { Task { await gallery.stop() } }
        let dir = TemporaryDirectory("dry-wal")
        try await syncAsAUserWould(dir, from: gallery, output: out)
        let index = SyncDirectory(dir.path).indexPath
        // A writer that commits a new tag for image 2 into the log and is killed before it checkpoints.
        let script = """
            import os, signal, sqlite3
            c = sqlite3.connect('\(index)'); c.execute('PRAGMA wal_autocheckpoint=0')
            c.execute("UPDATE files SET tag = 'older' WHERE name = 'gallery_image_2.png'"); c.commit()
            os.kill(os.getpid(), signal.SIGKILL)
            """
        _ = try await ChildProcess.run(executable: try #require(RepositoryFiles.tool("python3")), ["-c", script])
        var log = stat()
        try #require(stat(index + "-wal", &log) == 0 && log.st_size > 0, "the killed writer left its log")
        let before = try DirectorySnapshot(dir.path)
        let run = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "--dry-run"], outputDirectory: out.path)
        let after = try DirectorySnapshot(dir.path)
        #expect(after == before, "the log and its -shm as they were: \(after.changes(since: before))")
        #expect(run.status == ExitStatus.success.rawValue, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("would-refresh gallery_image_2.png key=/gallery/image?2 "), "\(run.stdout)")
    }

    @Test func aDryRunOfADirectoryAnAgentHoldsStopsAsTheRealRunWouldWithoutTouchingTheLock() async throws {
        let out = TemporaryDirectory("dry-out")
        let gallery = try await GalleryFixture(count: 1)
        defer { Task { await gallery.stop() } }
        let dir = TemporaryDirectory("dry-locked")
        let directory = SyncDirectory(dir.path)
        try directory.prepare()
        let lock = try DirectoryLock.acquire(path: directory.lockPath)
        defer { lock.release() }
        let before = try DirectorySnapshot(dir.path)
        let run = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "--dry-run"], outputDirectory: out.path)
        #expect(run.status == ExitStatus.locked.rawValue, "\(run.stderr)")
        #expect(run.stderr.contains("PID \(getpid())"), "\(run.stderr)")
        #expect(try DirectorySnapshot(dir.path) == before)
    }

    @Test func aPersonsFileOnAnAssetPathIsReportedAsTheConflictTheRealRunFindsAndLeftAlone() async throws {
        let out = TemporaryDirectory("dry-out")
        let gallery = try await GalleryFixture(count: 2)
        defer { Task { await gallery.stop() } }
        let dir = TemporaryDirectory("dry-conflict")
        let mine = Data("my own notes".utf8)
        try mine.write(to: URL(fileURLWithPath: dir.file("gallery_image_2.png")))
        let before = try DirectorySnapshot(dir.path)

        let run = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "--dry-run"], outputDirectory: out.path)
        #expect(try DirectorySnapshot(dir.path) == before)
        #expect(run.status == ExitStatus.partial.rawValue, "\(run.stderr)")
        #expect(run.stdout.contains(
            "would-conflict gallery_image_2.png key=/gallery/image?2 reason=\"a file the agent did not write\""), "\(run.stdout)")

        let real = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path)
        #expect(real.status == run.status)
        #expect(logLines(dir.path).contains { $0.contains("event=conflict") && $0.contains("gallery_image_2.png") })
        #expect(FileManager.default.contents(atPath: dir.file("gallery_image_2.png")) == mine)
    }

    /// The agent's file replaced by something it must never open (here a symbolic link to a person's file): the dry
    /// run reports the conflict the real run then reports, from the inspector's own look at the path, and neither
    /// run follows the link or touches what it points to.
    @Test func aLinkOnAStoredAssetsPathIsReportedAsTheConflictTheRealRunFinds() async throws {
        let out = TemporaryDirectory("dry-out")
        let gallery = try await GalleryFixture(count: 2)
        defer { Task { await gallery.stop() } }
        let dir = TemporaryDirectory("dry-link")
        try await syncAsAUserWould(dir, from: gallery, output: out)
        let elsewhere = TemporaryDirectory("dry-link-target")
        let mine = Data("my own notes".utf8)
        try mine.write(to: URL(fileURLWithPath: elsewhere.file("notes.txt")))
        unlink(dir.file("gallery_image_1.png"))
        #expect(symlink(elsewhere.file("notes.txt"), dir.file("gallery_image_1.png")) == 0)
        let before = try DirectorySnapshot(dir.path)

        let run = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "--dry-run"], outputDirectory: out.path)
        #expect(try DirectorySnapshot(dir.path) == before)
        #expect(run.stdout.contains(
            "would-conflict gallery_image_1.png key=/gallery/image?1 reason=\"a symbolic link\""), "\(run.stdout)")

        let real = try await AgentProcess.run(
            ["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: out.path)
        #expect(real.status == run.status, "\(real.stderr)")
        #expect(logLines(dir.path).contains { $0.contains("event=conflict") && $0.contains("gallery_image_1.png") })
        var link = stat()
        #expect(lstat(dir.file("gallery_image_1.png"), &link) == 0 && (link.st_mode & S_IFMT) == S_IFLNK)
        #expect(FileManager.default.contents(atPath: elsewhere.file("notes.txt")) == mine)
    }
}

/// What a person sees of a directory tree: every entry's relative name, inode, size and modification time.
/// The real run before a dry run, as a user makes it: the binary, run to its end. An agent run inside the test
/// process closes its index when its last reference goes, which can be after the run returned (a task of it still
/// ending on a loaded machine), and closing the last connection checkpoints the log and deletes `-wal` and `-shm`:
/// a change to DIR that a snapshot taken meanwhile would blame on the dry run (a fresh-clone CI run failed so).
private func syncAsAUserWould(_ dir: TemporaryDirectory, from gallery: GalleryFixture, output: TemporaryDirectory) async throws {
    let run = try await AgentProcess.run(
        ["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q"], outputDirectory: output.path)
    #expect(run.status == ExitStatus.success.rawValue, "\(run.stderr)")
}

struct DirectorySnapshot: Equatable, CustomStringConvertible {
    let entries: [String: [Int]]

    init(_ root: String) throws {
        var entries: [String: [Int]] = [:]
        func walk(_ relative: String) throws {
            let path = relative.isEmpty ? root : root + "/" + relative
            for name in try FileManager.default.contentsOfDirectory(atPath: path) {
                let child = relative.isEmpty ? name : relative + "/" + name
                var info = stat()
                guard lstat(root + "/" + child, &info) == 0 else { throw TestFailure("lstat \(child): errno \(errno)") }
                entries[child] = [
                    Int(info.st_ino), Int(info.st_size), Int(info.st_mtim.tv_sec) * 1_000_000_000 + Int(info.st_mtim.tv_nsec),
                ]
                if (info.st_mode & S_IFMT) == S_IFDIR { try walk(child) }
            }
        }
        try walk("")
        self.entries = entries
    }

    var description: String { entries.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: "\n") }

    /// The entries that differ from `earlier`'s (inode, size, mtime), for a failure's message: which file moved
    /// says which writer it was.
    func changes(since earlier: DirectorySnapshot) -> String {
        Set(entries.keys).union(earlier.entries.keys).sorted()
            .filter { entries[$0] != earlier.entries[$0] }
            .map { "\($0): \(earlier.entries[$0].map(String.init(describing:)) ?? "absent") -> \(entries[$0].map(String.init(describing:)) ?? "absent")" }
            .joined(separator: "; ")
    }
}
