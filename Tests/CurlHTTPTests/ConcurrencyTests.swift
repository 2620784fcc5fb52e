import CurlHTTP
import TestSupport
import Testing

/// Many requests at once, cancellation, and shutdown under load.
@Suite("Concurrency", .timeLimit(.minutes(1)))
struct ConcurrencyTests {
    @Test("100 concurrent requests with maxConcurrentRequests 4: all succeed on at most 4 reused connections")
    func hundredConcurrent() async throws {
        let server = try TestHTTPServer { request in
            .respond(status: 200, body: Array(request.target.utf8), delayMilliseconds: 5)
        }
        defer { server.stop() }
        let client = try CurlHTTPClient(configuration: .init(maxConcurrentRequests: 4))
        defer { client.shutdown() }

        let bodies = try await client.fetchAll((0..<100).map { index in server.url("/item/\(index)") })

        #expect(bodies.count == 100)
        for (index, body) in bodies { #expect(body == Array("/item/\(index)".utf8)) }
        let statistics = client.statistics
        #expect(statistics.requestsSucceeded == 100)
        #expect(statistics.peakActiveTransfers <= 4)
        #expect(statistics.peakActiveTransfers >= 2)
        #expect(statistics.activeTransfers == 0)
        // Each finished transfer's easy handle served a later request: no more were made than ran at once.
        #expect(statistics.easyHandlesMade <= 4, "\(statistics.easyHandlesMade) easy handles for 100 requests")
        #expect(server.peakOpenConnections <= 4)
        #expect(server.acceptedConnections <= 4)
        #expect(statistics.connectionsOpened == server.acceptedConnections)
        #expect(server.requests.count == 100)
    }

    @Test("Cancelling a slow request returns promptly, drops its connection, and the client keeps working")
    func cancellation() async throws {
        let server = try TestHTTPServer { request in
            request.target == "/slow" ? .silent : .respond(status: 200, body: Array("ok".utf8))
        }
        defer { server.stop() }
        // Timeouts beyond the suite's time limit: only the cancellation can end the silent request in time.
        let client = try CurlHTTPClient(configuration: .init(lowSpeedTime: .seconds(600), totalTimeout: .seconds(600)))
        defer { client.shutdown() }

        let task = Task { try await client.get(server.url("/slow")) }
        #expect(await eventually { server.requestCount("/slow") == 1 })
        task.cancel()
        let result = await task.result
        #expect(throws: CancellationError.self) { try result.get() }

        // The loop took the transfer off libcurl, which closed its connection.
        #expect(await eventually { server.openConnections == 0 })
        #expect(await eventually { client.statistics.requestsCancelled == 1 })
        #expect(try await client.fetch(server.url("/after")) == Array("ok".utf8))
        #expect(client.statistics.activeTransfers == 0)
    }

    @Test("A task cancelled before it asks never reaches the network")
    func cancelledBeforeStart() async throws {
        let server = try TestHTTPServer { _ in .respond(status: 200) }
        defer { server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }

        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.get(server.url("/never"))
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(client.statistics.requestsStarted == 0)
        #expect(server.acceptedConnections == 0)
    }

    @Test("Cancelling requests still waiting in the queue skips them without I/O")
    func cancelQueued() async throws {
        let (server, client, blocker, queued) = try await Self.fiveQueuedBehindABlocker()
        defer { server.stop() }
        defer { client.shutdown() }
        for task in queued { task.cancel() }
        for task in queued {
            await #expect(throws: CancellationError.self) { try await task.value }
        }
        blocker.cancel()
        _ = await blocker.result

        #expect(try await client.fetch(server.url("/after")) == Array("/after".utf8))
        #expect(server.requests.map(\.target) == ["/blocker", "/after"])
        #expect(client.statistics.requestsStarted == 2)
        #expect(client.statistics.queuedRequests == 0)
    }

    @Test("An urgent request waiting for a slot starts before the normal ones queued ahead of it")
    func urgentFirst() async throws {
        let (server, client, blocker, queued) = try await Self.fiveQueuedBehindABlocker()
        defer { server.stop() }
        defer { client.shutdown() }
        let urgent = Task { try await client.get(server.url("/urgent"), priority: .urgent) }
        #expect(await eventually { client.statistics.queuedRequests == 6 })
        blocker.cancel()
        _ = await blocker.result

        #expect(try await urgent.value.body == Array("/urgent".utf8))
        for task in queued { _ = try await task.value }
        // The five normal ones were submitted by five tasks at once, so their order among themselves is the tasks'.
        let targets = server.requests.map(\.target)
        #expect(Array(targets.prefix(2)) == ["/blocker", "/urgent"])
        #expect(Set(targets.dropFirst(2)) == Set((0..<5).map { "/queued/\($0)" }) && targets.count == 7)
    }

    /// A client with one transfer slot, held by `/blocker` (which the server never answers), and five requests
    /// (`/queued/0` to `/queued/4`) in the loop's queue behind it. Each echoes its target when answered.
    private static func fiveQueuedBehindABlocker() async throws
        -> (TestHTTPServer, CurlHTTPClient, blocker: Task<HTTPResponse, any Error>, queued: [Task<HTTPResponse, any Error>])
    {
        let server = try TestHTTPServer { request in
            request.target == "/blocker" ? .silent : .respond(status: 200, body: Array(request.target.utf8))
        }
        let client = try CurlHTTPClient(configuration: .init(maxConcurrentRequests: 1))
        let blocker = Task { try await client.get(server.url("/blocker")) }
        #expect(await eventually { server.requestCount("/blocker") == 1 })
        let queued = (0..<5).map { index in Task { try await client.get(server.url("/queued/\(index)")) } }
        // In the loop's queue, behind the blocker (before, a fixed 50 ms sleep: the test passed whether or not they
        // had got there, since a request cancelled on its way is skipped as well).
        #expect(await eventually { client.statistics.queuedRequests == 5 }, "\(client.statistics.queuedRequests) queued")
        return (server, client, blocker, queued)
    }

    @Test("shutdown fails running and queued requests promptly, and later requests fail at once")
    func shutdownInFlight() async throws {
        let server = try TestHTTPServer { _ in .silent }
        defer { server.stop() }
        // Timeouts beyond the suite's time limit: only the shutdown can end the silent requests in time.
        let client = try CurlHTTPClient(
            configuration: .init(maxConcurrentRequests: 2, lowSpeedTime: .seconds(600), totalTimeout: .seconds(600)))

        let tasks = (0..<4).map { index in Task { try await client.get(server.url("/slow/\(index)")) } }
        #expect(await eventually { server.requests.count == 2 })
        client.shutdown()
        for task in tasks {
            let error = await #expect(throws: HTTPClientError.self) { try await task.value }
            #expect(error?.kind == .cancelled)
        }
        #expect(await eventually { server.openConnections == 0 })

        let late = await #expect(throws: HTTPClientError.self) { try await client.get(server.url("/late")) }
        #expect(late?.kind == .cancelled)
        client.shutdown()
        #expect(server.requests.count == 2)
    }
}
