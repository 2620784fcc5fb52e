import CurlHTTP
import EmojiArtGallery
import EmojiArtSync
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
            guard case .changed(let feed, let validators) = try await fetcher.fetchFeed(validators: nil) else {
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
            guard case .changed(let smaller, let newValidators) = try await fetcher.fetchFeed(validators: validators) else {
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

    @Test("an asset fetched with its validators is notModified until its bytes change")
    func assetNotModifiedThenFetched() async throws {
        let gallery = try await GalleryFixture()
        let client = try CurlHTTPClient()
        defer { client.shutdown() }
        do {
            let fetcher = AssetFetcher(client: client, server: try ServerAddress(gallery.baseURL), retries: 0)
            let key = try AssetKey(feedURL: "/gallery/image?3")
            guard case .fetched(let asset, let validators) = try await fetcher.fetchAsset(key, validators: nil) else {
                throw TestFailure("an unconditional fetch must return the asset")
            }
            #expect(asset.bytes == gallery.server.imageBytes(3))
            #expect(!validators.isEmpty)
            let again = try await fetcher.fetchAsset(key, validators: validators)
            guard case .notModified = again else { throw TestFailure("expected notModified, got \(again)") }
            #expect(gallery.server.requestCount(path: "/gallery/image?3") == 2)

            gallery.server.setFaults(GalleryFaults(generation: 1))
            guard case .fetched(let newer, let newValidators) = try await fetcher.fetchAsset(key, validators: validators) else {
                throw TestFailure("a changed asset must be fetched")
            }
            #expect(newer.bytes == gallery.server.imageBytes(3))
            #expect(newer.bytes != asset.bytes)
            #expect(newValidators != validators)
            #expect(try await fetcher.fetchAsset(key).bytes == newer.bytes)

            // A validator is still no excuse for garbage: the error item is refused as before.
            let missing = try AssetKey(feedURL: "/gallery/image?10")
            await #expect(throws: SyncError.self) { try await fetcher.fetchAsset(missing, validators: newValidators) }
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
