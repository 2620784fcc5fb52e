import CurlHTTP
import EmojiArtGallery
import TestSupport
import Testing

/// The client against the project's real gallery server (its own small HTTP server on 127.0.0.1), faults included.
@Suite("Against the gallery server", .timeLimit(.minutes(1)))
struct GalleryServerTests {
    @Test("Feed and images arrive byte for byte; the error item is a 200 with its JSON body")
    func feedAndImages() async throws {
        try await withGallery { server, base in
            let client = try CurlHTTPClient(configuration: .init(maxConcurrentRequests: 4))
            defer { client.shutdown() }

            let feed = try await client.get(base + "/gallery/images")
            #expect(feed.status == 200)
            #expect(feed.body.first == UInt8(ascii: "["))

            // Every unique item at once: exact bytes, on at most four kept-alive connections.
            let numbers = Array(1...29)
            let bodies = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
                for n in numbers {
                    group.addTask { (n, try await client.fetch(base + "/gallery/image?\(n)")) }
                }
                var bodies: [Int: [UInt8]] = [:]
                for try await (n, body) in group { bodies[n] = body }
                return bodies
            }
            for n in numbers {
                #expect(bodies[n] == server.imageBytes(n), "image \(n)")
            }
            // The book's quirk: a missing image is a 200 with an error document, returned as such.
            #expect(bodies[10] == Array(#"{"error": "File not found."}"#.utf8))
            #expect(server.requestCount(path: "/gallery/image?3") == 1)
            #expect(server.imageRequestCount == 29)
            let statistics = client.statistics
            #expect(statistics.requestsSucceeded == 30)
            #expect(statistics.connectionsOpened <= 4)
        }
    }

    @Test("Injected faults map to their error kinds, and the client keeps working after each")
    func faults() async throws {
        let slowRecord = Shared<GalleryRequestRecord?>(nil)
        try await withGallery(requestLogger: { if $0.path == "/gallery/image?6" { slowRecord.set($0) } }) { server, base in
            // The slow image trickles out over 20 s: a cancellation that waited for it would be seen below.
            server.setFaults(
                GalleryFaults(imageFaults: [3: .serverError, 4: .truncated, 5: .endless, 6: .slow(milliseconds: 20_000)]))
            let limit = 256 * 1024
            let client = try CurlHTTPClient(configuration: .init(maxBodySize: limit))
            defer { client.shutdown() }

            let failed = try await client.get(base + "/gallery/image?3")
            #expect(failed.status == 500)
            let status = await #expect(throws: HTTPClientError.self) { try await client.fetch(base + "/gallery/image?3") }
            #expect(status?.kind == .httpStatus(500))

            let truncated = await #expect(throws: HTTPClientError.self) { try await client.fetch(base + "/gallery/image?4") }
            #expect(truncated?.kind == .truncated)
            let png = server.imageBytes(4)
            #expect(truncated?.message.hasPrefix("transfer ended early: got \(png.count / 2) of \(png.count) bytes") == true)

            let endless = await #expect(throws: HTTPClientError.self) { try await client.fetch(base + "/gallery/image?5") }
            #expect(endless?.kind == .tooLarge(limit: limit))
            #expect(await eventually { server.activeStreamCount == 0 })

            let slow = Task { try await client.fetch(base + "/gallery/image?6") }
            #expect(await eventually { server.requestCount(path: "/gallery/image?6") == 1 })
            slow.cancel()
            await #expect(throws: CancellationError.self) { try await slow.value }
            #expect(await eventually { server.activeStreamCount == 0 })
            // The client hung up in the middle of the body: the gallery wrote part of it, and says why it stopped.
            #expect(await eventually { slowRecord.value != nil })
            let record = try #require(slowRecord.value)
            #expect(record.bytes < server.imageBytes(6).count, "\(record)")
            #expect(record.error != nil, "\(record)")

            #expect(try await client.fetch(base + "/gallery/image?7") == server.imageBytes(7))
        }
    }

    /// Runs `body` against a fresh gallery on a free port and stops the server afterwards, even on failure.
    private func withGallery(
        requestLogger: (@Sendable (GalleryRequestRecord) -> Void)? = nil,
        _ body: (GalleryServer, String) async throws -> Void
    ) async throws {
        let server = GalleryServer(
            configuration: GalleryConfiguration(host: "127.0.0.1", port: 0, count: 29, requestLogger: requestLogger))
        let base = try await server.start()
        do {
            try await body(server, base)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }
}
