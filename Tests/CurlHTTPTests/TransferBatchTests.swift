import CurlHTTP
import Synchronization
import TestSupport
import Testing

/// Requests submitted together (`CurlHTTPClient.submit`): every result comes back exactly once, by its index,
/// however many finish before the task looks; redirects are delivered as they came; a refused URL at once;
/// cancelling ends the rest.
@Suite("Transfer batches", .timeLimit(.minutes(1)))
struct TransferBatchTests {
    /// A body sink that keeps what it is given, for checking that a batch's bodies go to their own sinks.
    final class KeptBody: HTTPBodySink {
        let bytes = Mutex<[UInt8]>([])
        func write(_ chunk: UnsafeRawBufferPointer) -> Bool {
            bytes.withLock { $0.append(contentsOf: chunk) }
            return true
        }
        var failureDescription: String { "" }
    }

    @Test("50 requests on 4 slots: each result once, by index, bodies in their own sinks; results that finished while nobody looked come in one call")
    func everyResultOnceByIndex() async throws {
        let server = try TestHTTPServer { request in .respond(status: 200, body: Array(request.target.utf8)) }
        defer { server.stop() }
        let client = try CurlHTTPClient(configuration: .init(maxConcurrentRequests: 4))
        defer { client.shutdown() }
        let sinks = (0..<50).map { _ in KeptBody() }
        let batch = client.submit((0..<50).map { TransferBatch.Request(url: server.url("/item/\($0)"), bodySink: sinks[$0]) })
        #expect(batch.count == 50)

        // Nobody looks until every transfer has ended: then one call hands out all fifty.
        #expect(await eventually { client.statistics.requestsSucceeded == 50 })
        let all = await batch.next()
        #expect(all.count == 50)
        #expect(Set(all.map(\.index)) == Set(0..<50))
        for (index, result) in all {
            let response = try result.get()
            #expect(response.status == 200)
            #expect(response.body.isEmpty, "a 200's body goes to its sink")
            #expect(sinks[index].bytes.withLock { $0 } == Array("/item/\(index)".utf8))
        }
        #expect(await batch.next().isEmpty, "nothing is handed out twice")
        #expect(client.statistics.peakActiveTransfers <= 4)
    }

    @Test("A task that waits is handed results as they finish, each once")
    func waitingTaskGetsEachOnce() async throws {
        let server = try TestHTTPServer { request in .respond(status: 200, body: [1], delayMilliseconds: 2) }
        defer { server.stop() }
        let client = try CurlHTTPClient(configuration: .init(maxConcurrentRequests: 2))
        defer { client.shutdown() }
        let batch = client.submit((0..<20).map { TransferBatch.Request(url: server.url("/\($0)")) })
        var seen: [Int] = []
        while case let finished = await batch.next(), !finished.isEmpty {
            for (index, result) in finished {
                seen.append(index)
                #expect(try result.get().body == [1])
            }
        }
        #expect(seen.sorted() == Array(0..<20))
        #expect(server.requests.count == 20)
    }

    @Test("A redirect is delivered as it came, not followed; a URL the client refuses is delivered at once")
    func redirectsAndRefusals() async throws {
        let server = try TestHTTPServer { request in
            request.target == "/old"
                ? .respond(status: 302, headers: [("Location", "/new")])
                : .respond(status: 200, body: Array("new".utf8))
        }
        defer { server.stop() }
        let client = try CurlHTTPClient()
        defer { client.shutdown() }
        let batch = client.submit([
            TransferBatch.Request(url: server.url("/old")), TransferBatch.Request(url: "ftp://127.0.0.1/x"),
        ])
        let results = await Self.allResults(of: batch)
        let redirect = try #require(try results[0]?.get())
        #expect(redirect.status == 302)
        #expect(redirect.redirectURL == server.url("/new"))
        #expect(server.requestCount("/new") == 0, "not followed")
        #expect(throws: HTTPClientError.self) { try results[1]?.get() }
    }

    @Test("Cancelling the waiting task ends every unfinished request with CancellationError and drops its transfer")
    func cancellation() async throws {
        let server = try TestHTTPServer { request in request.target == "/fast" ? .respond(status: 200) : .silent }
        defer { server.stop() }
        let client = try CurlHTTPClient(configuration: .init(lowSpeedTime: .seconds(600), totalTimeout: .seconds(600)))
        defer { client.shutdown() }
        let batch = client.submit([TransferBatch.Request(url: server.url("/fast"))] + (0..<3).map { _ in TransferBatch.Request(url: server.url("/slow")) })
        #expect(await eventually { server.requestCount("/slow") == 3 && client.statistics.requestsSucceeded == 1 })
        let waiting = Task { await Self.allResults(of: batch) }
        waiting.cancel()
        let results = await waiting.value
        #expect(results.count == 4)
        #expect((try? results[0]?.get())?.status == 200)
        for index in 1...3 {
            #expect(throws: CancellationError.self) { try results[index]?.get() }
        }
        // The silent requests' connections are closed; the fast one's is kept for reuse.
        #expect(await eventually { client.statistics.requestsCancelled == 3 && server.openConnections <= 1 }, "\(client.statistics) open \(server.openConnections)")
        #expect(client.statistics.activeTransfers == 0)
    }

    /// Every result of `batch`, by index, taken as they finish.
    private static func allResults(of batch: TransferBatch) async -> [Int: Result<HTTPResponse, any Error>] {
        var results: [Int: Result<HTTPResponse, any Error>] = [:]
        while case let finished = await batch.next(), !finished.isEmpty {
            for (index, result) in finished { results[index] = result }
        }
        return results
    }
}
