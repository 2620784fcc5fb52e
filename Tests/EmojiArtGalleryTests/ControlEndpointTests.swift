import EmojiArtGallery
import Foundation
import Testing

@Suite("Request counting and the /_control endpoints", .timeLimit(.minutes(1)))
struct ControlEndpointTests {
    @Test("requestCount counts exact path and query; imageRequestCount sums /gallery/image?*; reset zeroes both")
    func counting() async throws {
        try await withGallery { server, baseURL in
            _ = try await fetch(baseURL, "/gallery/images")
            _ = try await fetch(baseURL, "/gallery/image?3")
            _ = try await fetch(baseURL, "/gallery/image?3")
            _ = try await fetch(baseURL, "/gallery/image?10")
            _ = try await fetch(baseURL, "/gallery/image?zzz")
            _ = try await fetch(baseURL, "/elsewhere")
            #expect(server.requestCount(path: "/gallery/images") == 1)
            #expect(server.requestCount(path: "/gallery/image?3") == 2)
            #expect(server.requestCount(path: "/gallery/image?10") == 1)
            #expect(server.requestCount(path: "/gallery/image?4") == 0)
            #expect(server.imageRequestCount == 4)
            #expect(server.stats.total == 6)

            server.resetCounts()
            #expect(server.requestCount(path: "/gallery/image?3") == 0)
            #expect(server.imageRequestCount == 0)
            #expect(server.stats.total == 0)
        }
    }

    @Test("GET /_control/stats reports counts and the fault plan, and is not counted itself")
    func stats() async throws {
        try await withGallery(faults: GalleryFaults(imageFaults: [2: .slow(milliseconds: 10)])) { server, baseURL in
            _ = try await fetch(baseURL, "/gallery/image?1")
            _ = try await fetch(baseURL, "/gallery/image?1")
            let response = try await fetch(baseURL, "/_control/stats")
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/json")
            let stats = try JSONDecoder().decode(GalleryStats.self, from: Data(response.body))
            #expect(stats.total == 2)
            #expect(stats.imageRequests == 2)
            #expect(stats.paths == ["/gallery/image?1": 2])
            #expect(stats.activeStreams == 0)
            #expect(stats.faults == GalleryFaults(imageFaults: [2: .slow(milliseconds: 10)]))
            #expect(server.requestCount(path: "/_control/stats") == 0)
            #expect(stats == server.stats)
        }
    }

    @Test("POST /_control/faults takes a partial JSON plan with string faults and applies it at once")
    func postFaults() async throws {
        try await withGallery { server, baseURL in
            let plan = #"{"allImages": "serverError", "imageFaults": {"3": "slow:50", "4": "corrupt"}, "generation": 2}"#
            let response = try await fetch(baseURL, "/_control/faults", method: "POST", body: Array(plan.utf8))
            #expect(response.status == 200)
            let expected = GalleryFaults(imageFaults: [3: .slow(milliseconds: 50), 4: .corrupt], allImages: .serverError, generation: 2)
            #expect(try JSONDecoder().decode(GalleryFaults.self, from: Data(response.body)) == expected)
            #expect(server.faults == expected)
            #expect(try await fetch(baseURL, "/gallery/image?1").status == 500)
            #expect(try await fetch(baseURL, "/gallery/image?3").body == server.imageBytes(3))

            // An empty plan is "no faults"; the generation goes back to 0 too.
            _ = try await fetch(baseURL, "/_control/faults", method: "POST", body: Array("{}".utf8))
            #expect(server.faults == .none)
            #expect(try await fetch(baseURL, "/gallery/image?1").status == 200)
        }
    }

    @Test(
        "POST /_control/faults rejects a bad plan with 400 and keeps the old one",
        arguments: [#"{"allImages": "melting"}"#, #"{"feedStatus": 42}"#, "not json", #"{"imageFaults": {"x": "corrupt"}}"#, #"{"latencyMilliseconds": -1}"#]
    )
    func badPlans(body: String) async throws {
        try await withGallery(faults: GalleryFaults(emptyFeed: true)) { server, baseURL in
            let response = try await fetch(baseURL, "/_control/faults", method: "POST", body: Array(body.utf8))
            #expect(response.status == 400)
            #expect(response.text.contains("invalid fault plan"))
            #expect(server.faults == GalleryFaults(emptyFeed: true))
        }
    }

    @Test("POST /_control/reset zeroes the counts and keeps the faults; wrong methods answer 405")
    func reset() async throws {
        try await withGallery(faults: GalleryFaults(emptyFeed: true)) { server, baseURL in
            _ = try await fetch(baseURL, "/gallery/images")
            #expect(server.requestCount(path: "/gallery/images") == 1)
            let response = try await fetch(baseURL, "/_control/reset", method: "POST", body: [])
            #expect(response.status == 200)
            #expect(try JSONDecoder().decode(GalleryStats.self, from: Data(response.body)).total == 0)
            #expect(server.requestCount(path: "/gallery/images") == 0)
            #expect(server.faults.emptyFeed)

            #expect(try await fetch(baseURL, "/_control/reset").status == 405)
            #expect(try await fetch(baseURL, "/_control/faults").status == 405)
            #expect(try await fetch(baseURL, "/_control/stats", method: "POST", body: []).status == 405)
        }
    }
}

/// The barrier tests use to make overlapping transfers certain rather than likely.
@Suite("holdImageRequests: a barrier for overlapping requests", .timeLimit(.minutes(1)))
struct RequestBarrierTests {
    @Test("two requests in flight meet at the barrier and are both answered; the peak says 2")
    func twoRequestsMeet() async throws {
        try await withGallery { server, baseURL in
            server.holdImageRequests(untilAnswering: 2, timeout: .seconds(30))
            async let first = fetch(baseURL, "/gallery/image?1")
            async let second = fetch(baseURL, "/gallery/image?2")
            let (one, two) = try await (first, second)
            #expect(one.body == server.imageBytes(1))
            #expect(two.body == server.imageBytes(2))
            #expect(server.peakRequestsInFlight == 2)
        }
    }

    @Test("a lone request waits out the barrier's timeout and is then answered; the peak says 1")
    func aLoneRequestIsHeldUntilTheTimeout() async throws {
        try await withGallery { server, baseURL in
            server.holdImageRequests(untilAnswering: 2, timeout: .milliseconds(300))
            let clock = ContinuousClock()
            let start = clock.now
            let lone = try await fetch(baseURL, "/gallery/image?1")
            #expect(clock.now - start >= .milliseconds(300), "the request was not held")
            #expect(lone.body == server.imageBytes(1))
            #expect(server.peakRequestsInFlight == 1)
            // The meeting is over: the next request is answered at once, alone.
            #expect(try await fetch(baseURL, "/gallery/image?2").body == server.imageBytes(2))
        }
    }
}
