import CurlHTTP
import Dispatch
import TestSupport
import Testing

/// `maxReceiveBytesPerSecond` limits what all transfers of a client receive together. Only lower bounds are
/// asserted (a loaded machine is slower, never faster); the bytes must still arrive whole. The bounds allow for
/// the bucket's first tenth of a second and one chunk (a tenth of a second's worth) per transfer taken on credit
/// at the end: 200 KB at 100 KiB/s is at least (200,000 - 10,240 - 10,240 per transfer) / 102,400 s.
@Suite("Bandwidth limit", .timeLimit(.minutes(1)))
struct BandwidthLimitTests {
    static func body(_ count: Int, seed: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: ($0 &* 131 &+ seed) >> 3) }
    }

    @Test("one transfer of 200 KB at 100 KiB/s takes at least 1.7 s and arrives whole")
    func oneTransfer() async throws {
        let body = Self.body(200_000, seed: 1)
        let server = try TestHTTPServer { _ in .respond(status: 200, body: body) }
        defer { server.stop() }
        let client = try CurlHTTPClient(configuration: .init(maxReceiveBytesPerSecond: 100 * 1024))
        defer { client.shutdown() }
        let started = ContinuousClock.now
        let received = try await client.fetch(server.url("/big"))
        #expect(ContinuousClock.now - started >= .milliseconds(1_700))
        #expect(received == body)
        // The paused transfer's handle is not kept: the next request gets a new one and its own body, whole.
        #expect(try await client.fetch(server.url("/big")) == body)
        #expect(client.statistics.easyHandlesMade == 2)
    }

    /// A per-transfer limit (libcurl's `CURLOPT_MAX_RECV_SPEED_LARGE`) would let four transfers take 0.5 s.
    @Test("four transfers of 50 KB at once share 100 KiB/s: at least 1.4 s for the four")
    func transfersShareOneBudget() async throws {
        let server = try TestHTTPServer { request in
            .respond(status: 200, body: Self.body(50_000, seed: Int(request.target.dropFirst(3)) ?? 0))
        }
        defer { server.stop() }
        let client = try CurlHTTPClient(configuration: .init(maxConcurrentRequests: 4, maxReceiveBytesPerSecond: 100 * 1024))
        defer { client.shutdown() }
        let started = ContinuousClock.now
        let bodies = try await client.fetchAll((0..<4).map { index in server.url("/n/\(index)") })
        #expect(ContinuousClock.now - started >= .milliseconds(1_400))
        for index in 0..<4 { #expect(bodies[index] == Self.body(50_000, seed: index), "body \(index)") }
        #expect(client.statistics.peakActiveTransfers == 4, "the four ran at once")
    }
}

extension BandwidthLimitTests {
    /// A transfer that starts while another is under way is not starved: both get about half of the budget, so
    /// a small later one (a repair, say) is done while the large earlier one is still under way, not after it.
    /// The gallery holds the large body until the small request has come (a barrier, not a timing), so the large
    /// one has all of its bytes to go when the small one starts, however the machine schedules the two.
    @Test("transfers share the budget evenly: a later one is not starved by an earlier one")
    func evenShares() async throws {
        let large = 300_000, small = 50_000
        let smallAsked = DispatchSemaphore(value: 0)
        let server = try TestHTTPServer { request in
            if request.target == "/large" {
                _ = smallAsked.wait(timeout: .now() + 30)
            } else {
                smallAsked.signal()
            }
            return .respond(status: 200, body: Self.body(request.target == "/large" ? large : small, seed: request.target.count))
        }
        defer { server.stop() }
        let client = try CurlHTTPClient(configuration: .init(maxConcurrentRequests: 4, maxReceiveBytesPerSecond: 100 * 1024))
        defer { client.shutdown() }
        let order = Shared<[String]>([])
        let started = ContinuousClock.now
        let first = Task {
            _ = try await client.fetch(server.url("/large"))
            order.append("large")
            return ContinuousClock.now
        }
        #expect(await eventually { server.requestCount("/large") == 1 })
        let second = Task {
            _ = try await client.fetch(server.url("/small"))
            order.append("small")
        }
        let firstDone = try await first.value
        try await second.value
        // Alone, the large one takes 2.9 s, and the small one would wait for it if starved. Sharing, the small one
        // is done once it has had a sixth of what the large one needs.
        #expect(order.value == ["small", "large"], "the later transfer was starved")
        // Both bodies came through the one budget before the large one ended: at least (350,000 - 3 chunks of
        // 10,240 taken on credit) / 102,400 s.
        #expect(started.duration(to: firstDone) >= .milliseconds(3_000), "the two did not share one budget")
    }
}
