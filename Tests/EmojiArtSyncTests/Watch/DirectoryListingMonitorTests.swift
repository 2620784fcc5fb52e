@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Whether this machine lets a process use fanotify at all (where it cannot, the agent logs so and goes without).
enum Fanotify {
    static let works = (try? DirectoryListingMonitor(path: "/tmp")) != nil
}

/// Who lists DIR (`DirectoryListingMonitor`, fanotify with a mark on DIR alone) and what that does to the rename
/// gate: another program's listing is seen, the agent's own and reads of the files in DIR are not; while another
/// program holds DIR open and lists it, as `rm -rf` does from its listing to its last deletion, nothing is put in.
@Suite(.timeLimit(.minutes(2)), .enabled(if: Fanotify.works, "fanotify cannot be used here (a kernel before 5.13 without CAP_SYS_ADMIN, or a seccomp filter)"))
struct DirectoryListingMonitorTests {
    /// A script that does what `rm -rf DIR` does before it deletes anything (it opens DIR, keeps it open and lists
    /// it), says so with the file `listed`, and keeps DIR open until the file `go` appears.
    static func holdingScript(in folder: TemporaryDirectory) throws -> String {
        let script = folder.file("hold.sh")
        try """
        exec 3<"$1"
        ls -f "$1" > /dev/null
        : > "$2/listed"
        while [ ! -e "$2/go" ]; do sleep 0.02; done
        """.write(toFile: script, atomically: false, encoding: .utf8)
        return script
    }

    @Test func anotherProgramsListingIsSeenButNotTheAgentsOwnNorReadsOfItsFiles() throws {
        let dir = TemporaryDirectory("listing")
        #expect(FileManager.default.createFile(atPath: dir.file("a.png"), contents: Data([1, 2, 3])))
        let monitor = try DirectoryListingMonitor(path: dir.path)
        // The agent's own listing (this process).
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["a.png"])
        #expect(monitor.drain().isEmpty)
        // Another program reads a file in DIR: not a listing of DIR.
        #expect(try ChildProcess.runBlocking(executable: "/bin/cat", [dir.file("a.png")]).status == 0)
        #expect(monitor.drain().isEmpty)
        // Another program lists DIR: an open and a close (the read may come merged with the open).
        #expect(try ChildProcess.runBlocking(executable: "/bin/ls", ["-f", dir.path]).status == 0)
        let records = monitor.drain()
        let all = records.reduce(DirectoryListingMonitor.Record()) { $0.union($1) }
        #expect(all.contains([.opened, .read, .closed]) && !all.contains(.overflowed), "\(records)")
        #expect(monitor.drain().isEmpty)
    }

    /// Another program's deletion of an entry of DIR is reported (what tells `rm -rf` from a poller), the agent's own
    /// is not, and neither is a deletion in a folder inside DIR.
    @Test func anotherProgramsDeletionInDIRIsSeenButNotTheAgentsOwn() throws {
        let dir = TemporaryDirectory("listing-deletion")
        for name in ["a.png", "b.png"] { #expect(FileManager.default.createFile(atPath: dir.file(name), contents: Data([1]))) }
        #expect(mkdir(dir.file("sub"), 0o755) == 0)
        #expect(FileManager.default.createFile(atPath: dir.file("sub/c.png"), contents: Data([1])))
        let monitor = try DirectoryListingMonitor(path: dir.path)
        #expect(unlink(dir.file("a.png")) == 0)
        #expect(monitor.drain().isEmpty, "the agent's own deletion")
        #expect(try ChildProcess.runBlocking(executable: "/bin/rm", [dir.file("sub/c.png")]).status == 0)
        #expect(monitor.drain().isEmpty, "a deletion inside a folder in DIR")
        #expect(try ChildProcess.runBlocking(executable: "/bin/rm", [dir.file("b.png")]).status == 0)
        let records = monitor.drain()
        #expect(records.contains { $0.contains(.deleted) } && !records.contains { $0.contains(.opened) }, "\(records)")
    }

    @Test func theGateStaysShutWhileAnotherProgramHoldsDIROpenAndOpensOnceItCloses() async throws {
        let dir = TemporaryDirectory("listing-gate")
        let folder = TemporaryDirectory("listing-script")
        // A hold limit far beyond the test's run: only the close can open the gate.
        let gate = RenameGate(listingHoldLimit: .seconds(3600))
        gate.startWatching(listings: try DirectoryListingMonitor(path: dir.path))
        #expect(gate.isOpen)
        // A listing that is over (DIR closed again) holds the gate for a burst's quiet at most.
        #expect(try ChildProcess.runBlocking(executable: "/bin/ls", ["-f", dir.path]).status == 0)
        #expect(await gate.waitUntilOpen() == nil)
        let counted = gate.listingMark
        let holder = try ChildProcess(executable: "/bin/sh", [try Self.holdingScript(in: folder), dir.path, folder.path])
        #expect(await eventually { FileManager.default.fileExists(atPath: folder.file("listed")) })
        #expect(gate.listingMayHavePassedFiles(linkedSince: counted))
        #expect(!gate.isOpen, "open while another program holds DIR open after listing it")
        // Still shut well past the quiet after a deletion: it is the holder that keeps it shut.
        let quietEnd = ContinuousClock.now.advanced(by: RenameGate.burstQuiet * 3)
        try await Task.sleep(until: quietEnd, clock: .continuous)
        #expect(!gate.isOpen, "opened while another program still held DIR open")
        #expect(FileManager.default.createFile(atPath: folder.file("go"), contents: nil))
        #expect(await holder.waitForExit(timeout: .seconds(20)) == 0)
        #expect(await gate.waitUntilOpen() == nil)
    }
}
