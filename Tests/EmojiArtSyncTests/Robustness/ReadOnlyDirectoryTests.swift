import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Makes a test's DIR read-only and writable again. Root ignores permission bits, so for root DIR is a bind
/// mount of another directory, and a second, read-only bind mount of it is stacked on DIR (the kernel refuses
/// to remount the first one read-only while the agent holds files open for writing on it: the index, the
/// lock). Like `chmod 0555`, that stops every new open, create, rename and unlink under DIR, and leaves the
/// descriptors the agent already holds alone. Files can still be deleted behind the agent's back through the
/// other directory. Anyone but root gets `chmod 0555` on DIR.
final class ReadOnlySwitch {
    /// Whether this process can make a directory read-only for itself: anyone but root can (chmod); root
    /// needs permission to mount.
    static let usable = getuid() != 0 || TmpfsMount.available

    let dir: TemporaryDirectory
    /// Root only: the bind mount's source, where DIR's files can still be changed while DIR is read-only.
    let backing: TemporaryDirectory?

    init(_ dir: TemporaryDirectory) throws {
        self.dir = dir
        if getuid() == 0 {
            let backing = TemporaryDirectory("readonly-backing")
            try TmpfsMount.mount(["--bind", backing.path, dir.path])
            self.backing = backing
        } else {
            backing = nil
        }
    }

    /// What a write into the read-only DIR fails with.
    var errnoText: String { backing != nil ? "Read-only file system" : "Permission denied" }

    func makeReadOnly() throws {
        if let backing {
            try TmpfsMount.mount(["--bind", backing.path, dir.path])
            // The remount fails with EBUSY while any file is open for writing through the new mount: the agent
            // may be writing its status file through it at that very moment. That lasts milliseconds: try again.
            var attempt = 0
            while true {
                do {
                    try TmpfsMount.mount(["-o", "remount,bind,ro", dir.path])
                    return
                } catch where attempt < 100 {
                    attempt += 1
                    usleep(20_000)
                } catch {
                    throw TestFailure("\(error); this process's files open for writing under DIR: \(Self.filesOpenForWriting(under: dir.path))")
                }
            }
        } else if chmod(dir.path, 0o555) != 0 {
            throw TestFailure("chmod 0555 \(dir.path): errno \(errno)")
        }
    }

    /// The paths under `root` this process has open for writing (`/proc/self/fdinfo` flags), for the message of a
    /// remount that stayed busy.
    static func filesOpenForWriting(under root: String) -> [String] {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return fds.compactMap { fd in
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(fd)"),
                target.hasPrefix(root),
                let info = try? String(contentsOfFile: "/proc/self/fdinfo/\(fd)", encoding: .utf8),
                let flags = info.split(separator: "\n").first(where: { $0.hasPrefix("flags:") })
                    .flatMap({ Int($0.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8) }),
                flags & Int(O_ACCMODE) != Int(O_RDONLY)
            else { return nil }
            return "\(target) (fd \(fd))"
        }
    }

    func makeWritable() throws {
        if backing != nil {
            guard umount2(dir.path, Int32(MNT_DETACH)) == 0 else { throw TestFailure("umount \(dir.path): errno \(errno)") }
        } else if chmod(dir.path, 0o755) != 0 {
            throw TestFailure("chmod 0755 \(dir.path): errno \(errno)")
        }
    }

    deinit {
        if backing != nil {
            while umount2(dir.path, Int32(MNT_DETACH)) == 0 {}  // the read-only one if still there, then the first
        } else {
            _ = chmod(dir.path, 0o755)
        }
    }
}

/// DIR becoming read-only under a running agent: what fails is said once per failed write, naming the cause;
/// nothing already synced is lost, nothing partial is left, the agent goes on (polls, answers), and once DIR
/// is writable again it catches up on its own.
@Suite(.serialized, .timeLimit(.minutes(3)), .enabled(if: ReadOnlySwitch.usable, "as root, needs permission to mount (root ignores chmod; a read-only bind mount stops it)"))
struct ReadOnlyDirectoryTests {
    @Test func aReadOnlyDirectoryIsReportedLosesNothingAndIsCaughtUpOnceWritable() async throws {
        // Images 1...5 sync; 6...9 fail at the gallery until DIR is read-only, so they are written under it.
        let gallery = try await GalleryFixture(count: 9, faults: WritePathFaultTests.heldBack)
        let dir = TemporaryDirectory("readonly")
        let logs = TemporaryDirectory("readonly-log")
        let readOnly = try ReadOnlySwitch(dir)
        let agent = try await RunningAgent(WritePathFaultTests.configuration(gallery, dir: dir, logs: logs))
        #expect(await eventually { (1...5).allSatisfy { gallery.isMirrored($0, in: dir) } })
        let lines = {
            LogSink.flushAll()
            return ((try? String(contentsOfFile: logs.file("sync.log"), encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }

        // The first pass over (its end checkpoints the index: the checkpointing connection opens the write-ahead
        // log then, and one opened through the read-only switch's bind mount kept the remount busy).
        #expect(await eventually { lines().contains { $0.contains("event=pass") } }, "the first pass never ended")
        // Counted before the switch: a status write that fails at once (its one line) comes after this point, not
        // before it (a fresh-clone CI run missed that line when it was counted after the switch).
        let start = lines().count
        try readOnly.makeReadOnly()
        let requestsOf6 = gallery.server.requestCount(path: "/gallery/image?6")
        gallery.server.setFaults(.none)
        // As root, the user also deletes a file, through the directory DIR is a view of.
        var failing = Array(6...9)
        if let backing = readOnly.backing {
            #expect(unlink(backing.file("gallery_image_1.png")) == 0)
            failing.append(1)
        }
        let kept = (1...5).filter { !failing.contains($0) }
        let synced = kept.map { readBytes(dir.file("gallery_image_\($0).png")) }
        let tried = await eventually {
            let failed = lines().dropFirst(start).filter {
                $0.contains("event=asset") && $0.contains("result=failed") && $0.contains(readOnly.errnoText)
            }
            return failing.allSatisfy { n in failed.contains { $0.split(separator: " ").contains("key=/gallery/image?\(n)") } }
        }
        #expect(tried, "no clear failure line naming \(readOnly.errnoText): \(lines().dropFirst(start).joined(separator: "\n"))")
        #expect(failing.allSatisfy { !FileManager.default.fileExists(atPath: dir.file("gallery_image_\($0).png")) }, "no partial file in DIR")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty, "no partial file in tmp/")
        #expect(kept.map { readBytes(dir.file("gallery_image_\($0).png")) } == synced, "nothing already synced is lost")

        // The agent goes on: a poll asked for now runs and succeeds (it has nothing it could write).
        let beforePoll = lines().count
        await agent.keeper.pollNow()
        #expect(await eventually {
            lines().dropFirst(beforePoll).contains { $0.contains("event=poll") && $0.contains("result=ok") }
        }, "\(lines().dropFirst(beforePoll).joined(separator: "\n"))")
        // Long enough for several status writes to fail (each failure changes the status; it is written at most
        // four times a second): image 6 has been fetched and refused four times more, 0.2 + 0.4 + 0.8 s of backoff at
        // least. (Counted at the gallery: the same failure again is counted, not written again.)
        #expect(await eventually {
            gallery.server.requestCount(path: "/gallery/image?6") >= requestsOf6 + 4
        }, "\(lines().dropFirst(start).joined(separator: "\n"))")
        // On the read-only mount the status file cannot be written either: said once, clearly, not at every
        // change. (chmod 0555 on DIR leaves its state directory writable, and the status is written as usual.)
        if readOnly.backing != nil {
            // The status is written at most four times a second, after a change: wait for its line.
            _ = await eventually(timeout: .seconds(10)) { lines().dropFirst(start).contains { $0.contains("event=status") } }
        }
        let statusLines = lines().dropFirst(start).filter { $0.contains("event=status") }
        if readOnly.backing != nil {
            #expect(statusLines.count == 1, "\(statusLines.joined(separator: "\n"))")
            #expect(statusLines.first?.contains("result=failed") == true)
            #expect(statusLines.first?.contains("cannot write the status file \(dir.path)/.emojiart-sync/status.json: \(readOnly.errnoText)") == true, "\(statusLines)")
        } else {
            #expect(statusLines.isEmpty, "\(statusLines.joined(separator: "\n"))")
        }

        try readOnly.makeWritable()
        let recovered = await eventually(timeout: .seconds(30)) { (1...9).allSatisfy { gallery.isMirrored($0, in: dir) } }
        #expect(recovered, "the agent catches up on its own once DIR is writable")
        #expect(await eventually { (try? AgentStatus.read(from: dir.file(".emojiart-sync/status.json")))?.assets.ok == 9 })
        if readOnly.backing != nil {
            #expect(lines().contains { $0.contains("event=status") && $0.contains("result=ok") }, "the status file is written again, and that is said")
        }
        #expect(await agent.stop() == .success)
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        let names = try await indexedFileNames(in: dir.path)
        #expect((1...9).allSatisfy { names.contains("gallery_image_\($0).png") }, "the index caught up")
        await gallery.stop()
    }
}
