import EmojiArtPNG
@testable import EmojiArtSync
import Synchronization
import TestSupport
import Testing

/// The memory layer's coordination: real concurrent tasks against the real actor.
@Suite struct ImageLoaderTests {
    @Test func concurrentRequestsForOneKeyMakeOneLoad() async throws {
        let loader = ImageLoader(memoryLimit: 1 << 20)
        let loads = Shared(0)
        let asset = try makeAsset(1, size: 10)
        let hits = try await withThrowingTaskGroup(of: Hit.self) { group in
            for _ in 0..<50 {
                group.addTask {
                    try await loader.asset(for: asset.key) {
                        loads.increment()
                        try await Task.sleep(for: .milliseconds(50))
                        return (asset, .network)
                    }.1
                }
            }
            return try await group.reduce(into: [Hit]()) { $0.append($1) }
        }
        #expect(loads.value == 1)
        #expect(hits.filter { $0 == .network }.count == 1)
        #expect(hits.filter { $0 == .memory }.count == 49)
        #expect(await loader.memoryHits == 49)
    }

    /// A load runs in the task of the caller that began it (no task of its own). A waiter that gives up stops
    /// waiting at once and the load goes on; when the caller running it gives up, a caller still waiting takes
    /// the load over and gets the asset.
    @Test(.timeLimit(.minutes(1))) func aWaiterThatGivesUpLeavesTheLoadAndOneLeftTakesOverFromACancelledRunner() async throws {
        let loader = ImageLoader(memoryLimit: 1 << 20)
        let asset = try makeAsset(3, size: 10)
        let started = Shared(0)
        let cancelled = Shared(0)
        let release = AsyncStream<Void>.makeStream()
        // A load that runs until it is released or cancelled (a transfer in flight).
        let load: ImageLoader.Load = {
            started.increment()
            for await _ in release.stream {}
            if Task.isCancelled {
                cancelled.increment()
                throw CancellationError()
            }
            return (asset, .network)
        }
        let runner = Task { try await loader.asset(for: asset.key, load: load) }
        try #require(await eventually { started.value == 1 })
        let waiter = Task { try await loader.asset(for: asset.key, load: load) }
        try #require(await eventually { await loader.memoryHits == 1 }, "the second caller never joined the load")

        // A waiter gives up: it stops waiting now, and the load goes on for its runner.
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(cancelled.value == 0)
        #expect(await loader.loadsInFlight == 1)

        // The runner gives up while another caller waits: that caller loads again, and gets the asset.
        let heir = Task { try await loader.asset(for: asset.key, load: load) }
        try #require(await eventually { await loader.memoryHits == 2 })
        runner.cancel()
        await #expect(throws: CancellationError.self) { try await runner.value }
        try #require(await eventually { started.value == 2 }, "nobody took the load over")
        #expect(cancelled.value == 1)
        release.continuation.finish()
        let (got, hit) = try await heir.value
        #expect(got == asset && hit == .network)
        #expect(await loader.loadsInFlight == 0)
        #expect(await loader.failureCount == 0, "a cancelled load is not a failure to remember")
    }

    @Test func aFailureIsRememberedUntilItsRetryTimeThenTriedAgain() async throws {
        let clock = Mutex(ContinuousClock.now)
        let loader = ImageLoader(
            memoryLimit: 1 << 20, retryPolicy: RetryPolicy(base: .seconds(10), cap: .seconds(10), jitter: 0),
            now: { clock.withLock { $0 } })
        let asset = try makeAsset(2, size: 10)
        let attempts = Shared(0)
        let load: ImageLoader.Load = {
            let n = attempts.increment()
            if n == 1 { throw SyncError(.server, "first attempt fails") }
            return (asset, .network)
        }
        await #expect(throws: SyncError.self) { try await loader.asset(for: asset.key, load: load) }
        await #expect(throws: ImageLoader.RememberedFailure.self) { try await loader.asset(for: asset.key, load: load) }
        #expect(attempts.value == 1)
        clock.withLock { $0 = $0.advanced(by: .seconds(11)) }
        let (loaded, hit) = try await loader.asset(for: asset.key, load: load)
        #expect(loaded == asset && hit == .network)
        #expect(attempts.value == 2)
    }

    @Test func anAnswerThatIsNotAnImageWaitsLongerThanATransferFault() async throws {
        let start = ContinuousClock.now
        let loader = ImageLoader(
            memoryLimit: 1 << 20, retryPolicy: RetryPolicy(base: .seconds(2), cap: .seconds(300), jitter: 0, unusableAnswer: .seconds(3600)),
            now: { start })
        let errorItem = try AssetKey(feedURL: "/gallery/image?10")
        let damaged = try AssetKey(feedURL: "/gallery/image?3")
        // The book's error item: 200 with JSON, no PNG signature at all.
        _ = try? await loader.asset(for: errorItem) {
            throw SyncError(.invalidImage, "not a PNG", underlying: PNGDefect(.notPNG, "no signature"))
        }
        #expect(await loader.nextRetryAt == start.advanced(by: .seconds(3600)))
        // A PNG damaged in transit keeps the short backoff.
        _ = try? await loader.asset(for: damaged) {
            throw SyncError(.invalidImage, "bad CRC", underlying: PNGDefect(.badCRC, "chunk IDAT"))
        }
        #expect(await loader.nextRetryAt == start.advanced(by: .seconds(2)))
        // Kept as its text (`FailureText`): a refusal still says what the failure was, and forgetting the transient
        // failures (the gallery back after an outage) still keeps the answer that was no image, with its hour.
        let refusal = await loader.rememberedFailure(for: errorItem)
        #expect(refusal.map(String.init(describing:))?.hasPrefix("not a PNG (failed 1x; next attempt in ") == true)
        await loader.forgetTransientFailures()
        #expect(await loader.failingKeys == [errorItem])
        #expect(await loader.nextRetryAt == start.advanced(by: .seconds(3600)))
    }

    /// A fetched image's bytes are written to its file and dropped: memory keeps the record (256 bytes of
    /// accounting), so the cache's bound counts images known, not image bytes held; nor its digest (the index
    /// has it, and no access reads it from memory).
    @Test func memoryKeepsWhatIsKnownOfAnImageNotItsBytes() async throws {
        let loader = ImageLoader(memoryLimit: 1 << 20)
        let asset = try makeAsset(4, size: 50_000)
        let (loaded, hit) = try await loader.asset(for: asset.key) { (asset, .network) }
        #expect(hit == .network && loaded.bytes?.count == 50_000)  // the access itself gets the bytes
        let (cached, again) = try await loader.asset(for: asset.key) { Issue.record("loaded twice"); return (asset, .network) }
        #expect(again == .memory && cached.bytes == nil && cached.size == 50_000 && cached.sha256 == nil)
        #expect(await loader.cachedBytes == 256)
    }

    @Test func purgeDropsMemorySoTheNextAccessLoadsAgain() async throws {
        let loader = ImageLoader(memoryLimit: 1 << 20)
        let asset = try makeAsset(3, size: 100)
        let loads = Shared(0)
        let load: ImageLoader.Load = { loads.increment(); return (asset, .disk) }
        _ = try await loader.asset(for: asset.key, load: load)
        #expect(try await loader.asset(for: asset.key, load: load).1 == .memory)
        let dropped = await loader.purge()
        #expect(dropped == (entries: 1, bytes: Asset.recordCost))
        #expect(try await loader.asset(for: asset.key, load: load).1 == .disk)
        #expect(loads.value == 2)
    }
}
