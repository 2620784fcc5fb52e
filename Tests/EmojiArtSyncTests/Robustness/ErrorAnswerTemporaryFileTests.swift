import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A body goes to a temporary file as it arrives; an answer that is an error makes no file at all. Before, the
/// file was made when the request started and removed when the error came: a DIR turned read-only in between
/// kept it (ReadOnlyDirectoryTests found one), and every error item cost a create and an unlink.
@Suite(.timeLimit(.minutes(1)))
struct ErrorAnswerTemporaryFileTests {
    @Test func aRequestInFlightThatWillBeAnErrorHasMadeNoTemporaryFile() async throws {
        let gallery = try await GalleryFixture(count: 1, faults: GalleryFaults(allImages: .serverError))
        let dir = TemporaryDirectory("error-no-tmp")
        // The image request is held at the gallery (a barrier no second request will meet) until released below:
        // while it is held, the agent has sent it and has no answer yet.
        gallery.server.holdImageRequests(untilAnswering: 2, timeout: .seconds(50))
        let path = dir.path
        let run = Task { try await gallery.syncOnce(dir: path) { $0.http.retries = 0 } }
        let sent = await eventually(timeout: .seconds(30)) { gallery.server.imageRequestCount >= 1 }
        #expect(sent, "the agent never asked for the image")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty, "a temporary file exists before any byte of a body came")
        gallery.server.holdImageRequests(untilAnswering: 0, timeout: .zero)  // releases the held request
        let report = try await run.value
        await gallery.stop()
        #expect(report.failures.contains { $0.key.rawValue == "/gallery/image?1" })
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty, "temporary files left behind")
    }

    /// The gallery's error items answer `200` with a body that is no PNG (as do corrupt images): a small one is found
    /// so from memory, before any file is made, so the temporary folder never sees a file come and go. Seen with
    /// inotify on `tmp/` over a whole `--once` of the real binary where the file system has no unnamed files (the
    /// test fault `o-tmpfile-eopnotsupp`): only the valid images' files are created there. Before, each such body
    /// was written to a new file and unlinked (at 100,000 assets, 10,000 creates and unlinks that a cold sync's
    /// threads waited on while ext4's journal committed).
    @Test func aSmallBodyThatIsNoPNGMakesNoTemporaryFile() async throws {
        let gallery = try await GalleryFixture(count: 20, faults: GalleryFaults(imageFaults: [2: .corrupt]))
        let dir = TemporaryDirectory("no-png-no-tmp")
        let out = TemporaryDirectory("no-png-no-tmp-out")
        let created = try await Self.namesCreatedInTemporaryFolder(of: dir) {
            let run = try await AgentProcess.run(
                ["--dir", dir.path, "--server", gallery.baseURL, "--once", "-q", "--retries", "0"], outputDirectory: out.path,
                environment: ["EMOJIART_SYNC_TEST_FAULT": "o-tmpfile-eopnotsupp"])
            #expect(run.status == ExitStatus.partial.rawValue, "\(run.stderr)")
        }
        await gallery.stop()
        for number in gallery.errorNumbers + [2] { #expect(!gallery.isMirrored(number, in: dir)) }
        #expect(created.count == gallery.validNumbers.count - 1, "files created in tmp/: \(created)")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
    }

    /// Where the file system has unnamed files (`O_TMPFILE`), a body held whole in its write buffer goes to one and is
    /// linked straight into DIR: a cold `--once` makes no name in `tmp/` at all (before, one per image: a create there,
    /// and a rename out of it that took `tmp/`'s lock and looked the name up again).
    @Test func aSmallImageMakesNoNameInTheTemporaryFolder() async throws {
        let gallery = try await GalleryFixture(count: 20)
        let dir = TemporaryDirectory("no-name-in-tmp")
        let path = dir.path
        let created = try await Self.namesCreatedInTemporaryFolder(of: dir) {
            _ = try await gallery.syncOnce(dir: path) { $0.http.retries = 0 }
        }
        await gallery.stop()
        #expect(gallery.validNumbers.allSatisfy { gallery.isMirrored($0, in: dir) })
        #expect(created.isEmpty, "files created in tmp/: \(created)")
    }

    /// The names created in DIR's `tmp/` while `body` runs, seen with inotify (`IN_CREATE`), but the start's check
    /// that `tmp/` can be written (`.probe-PID`).
    static func namesCreatedInTemporaryFolder(
        of dir: TemporaryDirectory, during body: () async throws -> Void
    ) async throws -> [String] {
        let tmp = dir.path + "/" + SyncDirectory.stateDirectoryName + "/tmp"
        try FileManager.default.createDirectory(atPath: tmp, withIntermediateDirectories: true)
        let watch = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        try #require(watch >= 0)
        defer { close(watch) }
        try #require(inotify_add_watch(watch, tmp, UInt32(IN_CREATE)) >= 0)
        try await body()
        // Every event the run caused is queued by now.
        var created: [String] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            var offset = 0
            while offset < count {
                let length = Int(buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self) })
                let name = buffer[(offset + 16)..<(offset + 16 + length)].prefix { $0 != 0 }
                created.append(String(decoding: name, as: UTF8.self))
                offset += 16 + length
            }
        }
        return created.filter { !$0.hasPrefix(".probe-") }
    }
}
