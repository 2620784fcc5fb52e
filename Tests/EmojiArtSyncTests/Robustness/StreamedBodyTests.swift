import CPNG
import EmojiArtGallery
import EmojiArtSync
import Foundation
import Synchronization
import TestSupport
import Testing

/// Bodies go to their temporary file as they arrive: a photo-sized PNG is mirrored with the default settings
/// without the agent holding it in memory, and a body that never ends is cut by the body limit with nothing
/// left behind, in DIR or in its temporary folder, while the other assets sync.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct StreamedBodyTests {
    /// This process's anonymous resident memory (`RssAnon` in /proc/self/status), in bytes: what a body held in
    /// memory grows, and what file pages (the page cache, a mapping of the temporary file) do not.
    static func anonymousResidentBytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("RssAnon:") }),
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return 0 }
        return kilobytes * 1024
    }

    /// Samples ``anonymousResidentBytes()`` every few milliseconds until stopped; keeps the highest.
    final class PeakSampler: Sendable {
        private final class Readings: Sendable {
            let peak = Atomic<Int>(0)
            let running = Atomic<Bool>(true)
        }

        private let readings = Readings()
        private let task: Task<Void, Never>

        init() {
            let readings = readings
            task = Task.detached {
                while readings.running.load(ordering: .relaxed) {
                    readings.peak.max(StreamedBodyTests.anonymousResidentBytes(), ordering: .relaxed)
                    try? await Task.sleep(for: .milliseconds(5))
                }
            }
        }

        func stop() async -> Int {
            readings.running.store(false, ordering: .relaxed)
            await task.value
            return readings.peak.load(ordering: .relaxed)
        }
    }

    /// Before: refused with the default settings (`body larger than 4 MiB limit`), and with a higher limit held
    /// whole in memory (30 MiB more anonymous memory at least).
    @Test func aThirtyMegabytePNGIsMirroredWithTheDefaultsWithoutHoldingItInMemory() async throws {
        let gallery = try await GalleryFixture(count: 3, faults: GalleryFaults(imageFaults: [2: .large(megabytes: 30)]))
        let large = try gallery.server.largeImageBytes(megabytes: 30)  // made before the measure
        let dir = TemporaryDirectory("large-png")
        let before = Self.anonymousResidentBytes()
        let sampler = PeakSampler()
        let report = try await gallery.syncOnce(dir: dir.path) { configuration in
            configuration.maxBodySize = AgentConfiguration(directory: configuration.directory).maxBodySize
        }
        let peak = await sampler.stop()
        #expect(report.isComplete, "\(report.failures)")
        #expect(large.count > 30_000_000)
        let mirrored = readBytes(dir.file("gallery_image_2.png"))
        #expect(mirrored?.count == large.count)
        #expect(mirrored == large, "byte-identical")
        #expect(gallery.isMirrored(1, in: dir) && gallery.isMirrored(3, in: dir))
        // Generous: buffers, libcurl's, the test runner's own growth; a body in memory would be 30 MiB alone.
        #expect(peak - before < 16 << 20, "anonymous memory grew by \(peak - before) bytes during the run")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        await gallery.stop()
    }

    /// The cap is what stops a body that never ends (the default, 1 GiB, would write a gibibyte first: the test
    /// sets 2 MiB); its temporary file goes, and the rest of the gallery syncs.
    @Test func aBodyThatNeverEndsIsCutAtTheLimitAndLeavesNoFile() async throws {
        let gallery = try await GalleryFixture(count: 4, faults: GalleryFaults(imageFaults: [3: .endless]))
        let dir = TemporaryDirectory("endless-body")
        let report = try await gallery.syncOnce(dir: dir.path) { $0.maxBodySize = 2 << 20 }
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
            configuration.server = address
            configuration.maxBodySize = AgentConfiguration(directory: configuration.directory).maxBodySize
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
            configuration.server = address
            configuration.maxBodySize = 1 << 20
        }
        #expect(capped.failures.first?.reason.contains("body larger than 1 MiB limit") == true, "\(capped.failures)")
        #expect(cappedDir.names(in: ".emojiart-sync/tmp").isEmpty)
        await gallery.stop()
    }
}
