import CurlHTTP
import Foundation
import EmojiArtGallery
@testable import EmojiArtSync
import Synchronization
import TestSupport
import Testing

@Suite("AssetFetcher: conditional feed and asset requests against the gallery", .timeLimit(.minutes(2)))
struct ConditionalFetchTests {
    @Test("a second feed fetch with the validators is notModified (the gallery logs a 304 with no body); after a change it is changed")
    func feedNotModifiedThenChanged() async throws {
        let records = Mutex<[GalleryRequestRecord]>([])
        let server = GalleryServer(configuration: GalleryConfiguration(
            host: "127.0.0.1", port: 0, count: 29, requestLogger: { record in records.withLock { $0.append(record) } }))
        let base = try await server.start()
        let client = try CurlHTTPClient()
        defer { client.shutdown() }
        do {
            let fetcher = AssetFetcher(client: client, server: try ServerAddress(base), retries: 0)
            guard case .changed(let feed, let validators, _, _) = try await fetcher.fetchFeed(validators: nil) else {
                throw TestFailure("an unconditional fetch must return the feed")
            }
            #expect(feed.uniqueKeys.count == 29)
            #expect(validators.etag?.hasPrefix("W/\"f-") == true)
            #expect(validators.lastModified != nil)

            let second = try await fetcher.fetchFeed(validators: validators)
            guard case .notModified = second else { throw TestFailure("expected notModified, got \(second)") }
            try #require(await eventually(timeout: .seconds(10)) {
                records.withLock { $0.contains { $0.path == "/gallery/images" && $0.status == 304 && $0.bytes == 0 } }
            })

            server.setFaults(GalleryFaults(droppedItems: [3]))
            guard case .changed(let smaller, let newValidators, _, _) = try await fetcher.fetchFeed(validators: validators) else {
                throw TestFailure("a changed feed must come back as changed")
            }
            #expect(smaller.uniqueKeys.count == 28)
            #expect(newValidators != validators)
            // The old entry points still work.
            #expect(try await fetcher.fetchFeed().uniqueKeys.count == 28)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("a body byte-identical to the one whose digest is given is sameBody, not decoded; a changed one is decoded, in a file or in memory")
    func feedBodyUnchangedIsNotDecodedAgain() async throws {
        // A feed in one order at every request, as a static export serves it (the gallery shuffles it otherwise).
        let server = GalleryServer(configuration: GalleryConfiguration(
            host: "127.0.0.1", port: 0, count: 29, faults: GalleryFaults(unshuffledFeed: true)))
        let base = try await server.start()
        let client = try CurlHTTPClient()
        defer { client.shutdown() }
        let tmp = TemporaryDirectory("feed-body")
        do {
            let fetcher = AssetFetcher(client: client, server: try ServerAddress(base), retries: 0)
            for folder in [TemporaryFolder(path: tmp.path), nil] {
                guard case .changed(let feed, _, let digest, _) = try await fetcher.fetchFeed(validators: nil, bodyFolder: folder) else {
                    throw TestFailure("an unconditional fetch must return the feed")
                }
                #expect(feed.uniqueKeys.count == 29)
                #expect(digest.count == 64)
                // Unconditional again (a full pass asks so): the same bytes come back.
                let again = try await fetcher.fetchFeed(validators: nil, bodyFolder: folder, unchangedDigest: digest)
                guard case .sameBody(let validators) = again else { throw TestFailure("expected sameBody, got \(again)") }
                #expect(validators.etag != nil)
                server.setFaults(GalleryFaults(droppedItems: [3], unshuffledFeed: true))
                let changed = try await fetcher.fetchFeed(validators: nil, bodyFolder: folder, unchangedDigest: digest)
                guard case .changed(let smaller, _, let newDigest, _) = changed else { throw TestFailure("expected changed, got \(changed)") }
                #expect(smaller.uniqueKeys.count == 28)
                #expect(newDigest != digest)
                server.setFaults(GalleryFaults(unshuffledFeed: true))
            }
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    @Test("an asset fetched with its validators is notModified (no file) until its bytes change; then it is staged in a temporary file")
    func assetNotModifiedThenFetched() async throws {
        let gallery = try await GalleryFixture()
        let client = try CurlHTTPClient()
        defer { client.shutdown() }
        let tmp = TemporaryDirectory("conditional-asset")
        do {
            let fetcher = AssetFetcher(client: client, server: try ServerAddress(gallery.baseURL), retries: 0)
            let key = try AssetKey(feedURL: "/gallery/image?3")
            guard case .staged(let first) = try await fetcher.fetchAndStage(key, in: TemporaryFolder(path: tmp.path), validators: nil) else {
                throw TestFailure("an unconditional fetch must stage the asset")
            }
            #expect(readBytes(first.file.readablePath) == gallery.server.imageBytes(3))
            #expect(first.asset.bytes == nil, "the body went to the file, not to memory")
            #expect(!first.validators.isEmpty)
            first.file.discard()
            let again = try await fetcher.fetchAndStage(key, in: TemporaryFolder(path: tmp.path), validators: first.validators)
            guard case .notModified = again else { throw TestFailure("expected notModified, got \(again)") }
            #expect(gallery.server.requestCount(path: "/gallery/image?3") == 2)
            #expect(tmp.names().isEmpty, "a 304 makes no file")

            gallery.server.setFaults(GalleryFaults(generation: 1))
            let changed = try await fetcher.fetchAndStage(key, in: TemporaryFolder(path: tmp.path), validators: first.validators)
            guard case .staged(let newer) = changed else { throw TestFailure("a changed asset must be staged, got \(changed)") }
            #expect(readBytes(newer.file.readablePath) == gallery.server.imageBytes(3))
            #expect(newer.asset.sha256 != first.asset.sha256)
            #expect(newer.validators != first.validators)
            newer.file.discard()

            // A validator is still no excuse for garbage: the error item is refused as before, and leaves no file.
            let missing = try AssetKey(feedURL: "/gallery/image?10")
            let refusal = await #expect(throws: SyncError.self) {
                try await fetcher.fetchAndStage(missing, in: TemporaryFolder(path: tmp.path), validators: newer.validators)
            }
            #expect(refusal?.code == .invalidImage)
            #expect(tmp.names().isEmpty)
        } catch {
            await gallery.stop()
            throw error
        }
        await gallery.stop()
    }

    @Test("a feed larger than the feed's own limit is refused with a message that says so")
    func oversizedFeedRefused() async throws {
        // One injected url just over the limit makes the whole feed larger than it.
        let huge = pathLongerThanTheFeedLimit()
        let gallery = try await GalleryFixture(count: 3, faults: GalleryFaults(extraFeedURLs: [huge]))
        let client = try CurlHTTPClient()
        defer { client.shutdown() }
        do {
            let fetcher = AssetFetcher(client: client, server: try ServerAddress(gallery.baseURL), retries: 0)
            let error = await #expect(throws: SyncError.self) { try await fetcher.fetchFeed(validators: nil) }
            #expect(error?.code == .feed)
            #expect(error?.message.contains("larger than 64 MiB, the feed's limit") == true)
        } catch {
            await gallery.stop()
            throw error
        }
        await gallery.stop()
    }
}
