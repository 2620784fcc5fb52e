import CPNG
import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// Bodies go to their temporary file as they arrive: a photo-sized PNG is mirrored with the default settings
/// without the agent holding it in memory, and a body that never ends is cut by the body limit with nothing
/// left behind, in DIR or in its temporary folder, while the other assets sync.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct StreamedBodyTests {
    /// `VmHWM` of process `pid` (its peak resident set since it started, file pages included: a mapping of the
    /// temporary file counts as much as a copy of the body), in bytes; nil when /proc has no such line.
    static func peakResidentBytes(of pid: pid_t) -> Int? {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return nil }
        return kilobytes * 1024
    }

    /// Before: refused with the default settings (`body larger than 4 MiB limit`); then, streamed to the temporary
    /// file but checked through an `mmap` of it, the agent's peak RSS grew by the body's size (the mapping's pages).
    /// Now the agent (its own process, with the defaults) repairs a 30 MB image byte-identical, and its peak RSS
    /// stays within a few buffers of its peak before: the body is never held, neither while it arrives nor while
    /// it is checked.
    @Test func aThirtyMegabytePNGIsMirroredWithTheDefaultsWithoutHoldingItInMemory() async throws {
        let gallery = try await GalleryFixture(count: 3)
        // Made before the agent needs it; stored uncompressed, it costs copies, not the CPU of compressing 30 MB.
        let large = try gallery.server.largeImageBytes(megabytes: 30)
        #expect(large.count > 30_000_000)
        let dir = TemporaryDirectory("large-png")
        let out = TemporaryDirectory("large-png-out")
        let agent = try AgentProcess(
            ["--dir", dir.path, "--server", gallery.baseURL, "-q", "--interval", "3600"], outputDirectory: out.path)
        try #require(await eventually(timeout: .seconds(60)) { gallery.validNumbers.allSatisfy { gallery.isMirrored($0, in: dir) } })
        let idle = try #require(Self.peakResidentBytes(of: agent.pid))

        // The repair of image 2 brings the photo-sized body: the agent's only large transfer.
        gallery.server.setFaults(GalleryFaults(imageFaults: [2: .large(megabytes: 30)]))
        let path = dir.file("gallery_image_2.png")
        unlink(path)
        let arrived = await eventually(timeout: .seconds(60)) {
            ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) == large.count
        }
        let peak = try #require(Self.peakResidentBytes(of: agent.pid))
        agent.signal(SIGTERM)
        #expect(await agent.waitForExit() == 0, "\(agent.stderr)")
        #expect(arrived, "\(agent.stderr)")
        #expect(readBytes(path).map(SHA256Digest.hex(of:)) == SHA256Digest.hex(of: large), "byte-identical")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        // Generous: the write buffer, libcurl's and libpng's, malloc's slack; the body alone would be 30 MiB.
        #expect(peak - idle < 16 << 20, "peak RSS \(peak >> 20) MiB after the transfer, \(idle >> 20) MiB before")
        await gallery.stop()
    }

    /// Before: a changed item fetched again with its `ETag` was held in memory, and refused over 64 MiB whatever
    /// `--max-body-size` said (`body larger than 64 MiB limit`). Now the `200` to the conditional request streams to
    /// a temporary file and is committed as a miss's body is: a 64 MiB + 100 B image (padding chunks of zeros, sent
    /// deflated) replaces the old one byte-identical; over the body limit the refresh fails with the miss's error
    /// and keeps the stored file; no temporary file is left either way.
    @Test func aRefreshedImageGoesThroughItsTemporaryFileWithTheMissesLimit() async throws {
        let gallery = try await GalleryFixture(count: 3, imageSize: .small)
        let large = try ScrubTests.paddedPNG(paddingChunks: 4)
        let deflated = try ScrubTests.deflated(large)
        let round = Shared(0)  // 0: the first sync; then each round changes image 2's tag and bytes
        let server = try TestHTTPServer { request in
            let target = request.target
            let now = round.value
            if target == "/gallery/images", now > 0, let feed = try? JSONEncoder().encode(gallery.server.uniqueItems.map { item in
                var item = item
                if item.url == "/gallery/image?2" { item.checksum += "-\(now)" }
                return item
            }) {
                return .respond(status: 200, headers: [("Content-Type", "application/json")], body: Array(feed))
            }
            guard target == "/gallery/image?2" else { return gallery.reply(for: target) }
            if now == 0 {
                return .respond(status: 200, headers: [("Content-Type", "image/png"), ("ETag", "\"v0\"")], body: gallery.server.imageBytes(2))
            }
            return .respond(
                status: 200, headers: [("Content-Type", "image/png"), ("Content-Encoding", "deflate"), ("ETag", "\"v\(now)\"")],
                body: deflated)
        }
        defer { server.stop() }
        let address = try ServerAddress(server.origin)
        let dir = TemporaryDirectory("refresh-large")
        let path = dir.file("gallery_image_2.png")
        let defaults = AgentConfiguration(directory: SyncDirectory(dir.path)).http.maxBodySize
        let first = try await gallery.syncOnce(dir: dir.path) { $0.http.server = address }
        #expect(first.isComplete && readBytes(path) == gallery.server.imageBytes(2), "\(first.failures)")

        round.increment()
        let refreshed = try await gallery.syncOnce(dir: dir.path) { configuration in
            configuration.http.server = address
            configuration.http.maxBodySize = defaults
        }
        #expect(refreshed.isComplete, "\(refreshed.failures)")
        #expect(readBytes(path).map(SHA256Digest.hex(of:)) == SHA256Digest.hex(of: large), "the refreshed bytes are the new ones")
        #expect(logLines(dir.path).contains { $0.contains("event=refresh") && $0.contains("result=updated") && $0.contains("key=/gallery/image?2") })
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)

        round.increment()
        let capped = try await gallery.syncOnce(dir: dir.path) { configuration in
            configuration.http.server = address
            configuration.http.maxBodySize = 1 << 20
        }
        // A refresh's failure is logged (the pass's report lists accesses, not refreshes).
        #expect(logLines(dir.path).contains { $0.contains("key=/gallery/image?2") && $0.contains("body larger than 1 MiB limit") })
        #expect(capped.isComplete, "\(capped.failures)")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        #expect((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int == large.count, "the stored file stays")
        await gallery.stop()
    }

    /// The cap is what stops a body that never ends (the default, 1 GiB, would write a gibibyte first: the test
    /// sets 2 MiB); its temporary file goes, and the rest of the gallery syncs.
    @Test func aBodyThatNeverEndsIsCutAtTheLimitAndLeavesNoFile() async throws {
        let gallery = try await GalleryFixture(count: 4, faults: GalleryFaults(imageFaults: [3: .endless]))
        let dir = TemporaryDirectory("endless-body")
        let report = try await gallery.syncOnce(dir: dir.path) { $0.http.maxBodySize = 2 << 20 }
        #expect(report.failures.map(\.key.rawValue) == ["/gallery/image?3"])
        #expect(report.failures.first?.reason.contains("body larger than 2 MiB limit") == true, "\(report.failures)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("gallery_image_3.png")))
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty, "the cut body's temporary file was removed")
        #expect([1, 2, 4].allSatisfy { gallery.isMirrored($0, in: dir) })
        await gallery.stop()
    }
}

extension StreamedBodyTests {
    /// 20 MiB of zeros deflated to a few KiB (`Content-Encoding: deflate`): libcurl inflates it on the way, the
    /// inflated bytes go to the temporary file, not to memory, and the PNG check refuses them; the file goes.
    /// With a smaller limit the same body is cut at the limit.
    @Test func aDecompressionBombIsRefusedAndLeavesNoFile() async throws {
        let gallery = try await GalleryFixture(count: 4)
        var inflated = [UInt8](repeating: 0, count: 20 << 20)
        var deflated = [UInt8](repeating: 0, count: Int(compressBound(uLong(inflated.count))))
        var deflatedCount = uLongf(deflated.count)
        let code = compress2(&deflated, &deflatedCount, &inflated, uLong(inflated.count), 9)
        try #require(code == Z_OK)
        inflated = []
        let bomb = Array(deflated.prefix(Int(deflatedCount)))
        let server = try TestHTTPServer { request in
            let target = request.target
            guard target == "/gallery/image?2" else { return gallery.reply(for: target) }
            return .respond(
                status: 200, headers: [("Content-Type", "application/octet-stream"), ("Content-Encoding", "deflate")],
                body: bomb)
        }
        defer { server.stop() }
        let address = try ServerAddress(server.origin)
        let dir = TemporaryDirectory("bomb")
        let report = try await gallery.syncOnce(dir: dir.path) { configuration in
            configuration.http.server = address
            configuration.http.maxBodySize = AgentConfiguration(directory: configuration.directory).http.maxBodySize
        }
        #expect(bomb.count < 64 * 1024)
        #expect(report.failures.map(\.key.rawValue) == ["/gallery/image?2"])
        #expect(report.failures.first?.reason.contains("did not answer with a valid PNG") == true, "\(report.failures)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("gallery_image_2.png")))
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        #expect([1, 3].allSatisfy { gallery.isMirrored($0, in: dir) })

        // A new directory: the first one has the answer on record as no image, and would not ask again soon.
        let cappedDir = TemporaryDirectory("bomb-capped")
        let capped = try await gallery.syncOnce(dir: cappedDir.path) { configuration in
            configuration.http.server = address
            configuration.http.maxBodySize = 1 << 20
        }
        #expect(capped.failures.first?.reason.contains("body larger than 1 MiB limit") == true, "\(capped.failures)")
        #expect(cappedDir.names(in: ".emojiart-sync/tmp").isEmpty)
        await gallery.stop()
    }
}
