import EmojiArtGallery
import Foundation
import TestSupport
import Testing

@Suite("Fault injection: each fault really happens on the wire", .timeLimit(.minutes(1)))
struct FaultTests {
    @Test("corrupt: signature and framing intact, one byte flipped inside IDAT, that chunk's CRC wrong")
    func corrupt() async throws {
        try await withGallery(faults: GalleryFaults(imageFaults: [5: .corrupt])) { server, baseURL in
            let response = try await fetch(baseURL, "/gallery/image?5")
            #expect(response.status == 200)
            #expect(response.headers["content-type"] == "application/octet-stream")
            let pristine = server.imageBytes(5)
            #expect(response.body.count == pristine.count)
            #expect(zip(response.body, pristine).filter { $0 != $1 }.count == 1)

            let chunks = try PNGInspection.chunks(response.body)  // framing still walks
            let bad = chunks.filter { !$0.crcMatches }
            #expect(bad.count == 1)
            #expect(bad.first?.type == "IDAT")
            #expect(throws: TestFailure.self) { try PNGInspection.decodeRGBA(response.body) }

            // Other images are untouched.
            let other = try await fetch(baseURL, "/gallery/image?6")
            #expect(other.body == server.imageBytes(6))
        }
    }

    @Test("truncated: Content-Length announces the full size, about half arrives, then the connection closes")
    func truncated() async throws {
        try await withGallery(faults: GalleryFaults(imageFaults: [3: .truncated])) { server, baseURL in
            let full = server.imageBytes(3)
            let response = try await RawHTTP.get(baseURL, "/gallery/image?3")
            #expect(response.status == 200)
            #expect(response.headers["content-length"] == String(full.count))
            #expect(response.serverClosed)
            #expect(response.body.count < full.count)
            #expect(response.body.count == full.count / 2)
            #expect(Array(full.prefix(response.body.count)) == response.body)

            // URLSession sees a failed transfer, not a short success.
            await #expect(throws: (any Error).self) { _ = try await fetch(baseURL, "/gallery/image?3") }
        }
    }

    @Test(
        "truncated: curl reports a partial file (exit 18, CURLE_PARTIAL_FILE)",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/curl"), "needs /usr/bin/curl")
    )
    func truncatedWithCurl() async throws {
        try await withGallery(faults: GalleryFaults(allImages: .truncated)) { server, baseURL in
            let run = try await ChildProcess.run(executable: "/usr/bin/curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code} %{size_download}", baseURL + "/gallery/image?1"])
            #expect(run.status == 18, "curl stderr: \(run.stderr)")
            #expect(run.stdout == "200 \(server.imageBytes(1).count / 2)")
        }
    }

    @Test("serverError: 500 with a JSON body")
    func serverError() async throws {
        try await withGallery(faults: GalleryFaults(allImages: .serverError)) { _, baseURL in
            let response = try await fetch(baseURL, "/gallery/image?2")
            #expect(response.status == 500)
            #expect(response.headers["content-type"] == "application/json")
        }
    }

    @Test("endless: garbage keeps coming (4 MiB and counting); after the client hangs up the server stops writing and keeps serving")
    func endless() async throws {
        try await withGallery(faults: GalleryFaults(imageFaults: [4: .endless])) { server, baseURL in
            let limit = 4 * 1024 * 1024
            let response = try await RawHTTP.get(baseURL, "/gallery/image?4", bodyLimit: limit)
            #expect(response.status == 200)
            #expect(response.headers["content-length"] == nil)
            #expect(response.headers["transfer-encoding"] == "chunked")
            #expect(response.body.count == limit)
            #expect(!response.serverClosed, "the body should still be streaming when the client hangs up")
            #expect(!response.body.starts(with: PNGInspection.signature))

            // The server notices the hang-up and ends the stream.
            #expect(await eventually(timeout: .seconds(10)) { server.activeStreamCount == 0 })

            // And it still serves.
            let normal = try await fetch(baseURL, "/gallery/image?5")
            #expect(normal.body == server.imageBytes(5))
        }
    }

    @Test("endless: the server does not run ahead of a slow reader (nothing piles up beyond the socket)")
    func endlessBackPressure() async throws {
        let record = Shared<GalleryRequestRecord?>(nil)
        try await withGallery(faults: GalleryFaults(allImages: .endless), requestLogger: { record.set($0) }) { server, baseURL in
            let limit = 2 * 1024 * 1024
            // About 1.5 s of reading 64 KiB at a time through a 64 KiB receive buffer.
            let reader = RawHTTP.SlowReader(receiveBufferBytes: 64 * 1024, pauseMilliseconds: 40)
            _ = try await RawHTTP.get(baseURL, "/gallery/image?1", bodyLimit: limit, slowReader: reader)
            _ = await eventually(timeout: .seconds(10)) { record.value != nil }
            let logged = try #require(record.value)
            #expect(logged.fault == "endless")
            // Written = read + the two socket buffers (the server's send buffer grows to at most
            // net.ipv4.tcp_wmem's maximum) + about one 64 KiB chunk: each write blocks until the kernel
            // has taken it, so a server that queued writes would run ahead by tens of MiB per second of a slow reader.
            let sendBufferMaximum = try Self.kernelMaximum("/proc/sys/net/ipv4/tcp_wmem")
            let bound = limit + sendBufferMaximum + 1024 * 1024
            #expect(logged.bytes <= bound, "server wrote \(logged.bytes) bytes for a \(limit)-byte read (bound \(bound))")
            #expect(server.activeStreamCount == 0)
        }
    }

    /// The third (maximum) value of a `min default max` sysctl file such as tcp_wmem.
    private static func kernelMaximum(_ path: String) throws -> Int {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        guard let value = text.split(whereSeparator: \.isWhitespace).last.flatMap({ Int($0) }) else {
            throw TestFailure("cannot read \(path)")
        }
        return value
    }

    @Test("changing: each response is a different valid PNG")
    func changing() async throws {
        try await withGallery(faults: GalleryFaults(imageFaults: [7: .changing])) { _, baseURL in
            let first = try await fetch(baseURL, "/gallery/image?7").body
            let second = try await fetch(baseURL, "/gallery/image?7").body
            #expect(first != second)
            for body in [first, second] {
                let decoded = try PNGInspection.decodeRGBA(body)
                #expect(decoded.width == 360 && decoded.height == 650)
            }
        }
    }

    @Test("slow: the body trickles out over the given time and arrives complete")
    func slow() async throws {
        try await withGallery(faults: GalleryFaults(imageFaults: [8: .slow(milliseconds: 600)])) { server, baseURL in
            let response = try await fetch(baseURL, "/gallery/image?8")
            #expect(response.body == server.imageBytes(8))
            #expect(response.duration >= .milliseconds(550))
        }
    }

    @Test("latency delays every gallery response, but not the control endpoints")
    func latency() async throws {
        try await withGallery(faults: GalleryFaults(latencyMilliseconds: 400)) { server, baseURL in
            let feed = try await fetch(baseURL, "/gallery/images")
            #expect(feed.status == 200)
            #expect(feed.duration >= .milliseconds(380))
            let image = try await fetch(baseURL, "/gallery/image?1")
            #expect(image.duration >= .milliseconds(380))

            // A latency longer than the suite's time limit: an image asked for now is held while the stats,
            // asked for after it, are answered (stopping the server ends the hold).
            server.setFaults(GalleryFaults(latencyMilliseconds: 600_000))
            let heldAnswered = Shared(false)
            let held = Task {
                _ = try? await fetch(baseURL, "/gallery/image?2")
                heldAnswered.set(true)
            }
            #expect(await eventually { server.requestCount(path: "/gallery/image?2") == 1 })
            let stats = try await fetch(baseURL, "/_control/stats")
            #expect(stats.status == 200)
            #expect(!heldAnswered.value, "the image asked for first was answered before the stats")
            await server.stop()
            await held.value
        }
    }

    @Test("a fault for N wins over allImages; faults leave the error items alone")
    func precedence() async throws {
        let faults = GalleryFaults(imageFaults: [2: .corrupt], allImages: .serverError)
        try await withGallery(faults: faults) { server, baseURL in
            #expect(try await fetch(baseURL, "/gallery/image?1").status == 500)
            let two = try await fetch(baseURL, "/gallery/image?2")
            #expect(two.status == 200)
            #expect(try PNGInspection.chunks(two.body).contains { !$0.crcMatches })
            let ten = try await fetch(baseURL, "/gallery/image?10")
            #expect(ten.status == 200)
            #expect(ten.text == #"{"error": "File not found."}"#)
            #expect(server.faults == faults)
        }
    }

    @Test("faults change at runtime and switch off again")
    func runtimeChanges() async throws {
        try await withGallery { server, baseURL in
            #expect(try await fetch(baseURL, "/gallery/image?1").status == 200)
            server.setFaults(GalleryFaults(allImages: .serverError))
            #expect(try await fetch(baseURL, "/gallery/image?1").status == 500)
            server.setFaults(.none)
            let healed = try await fetch(baseURL, "/gallery/image?1")
            #expect(healed.status == 200)
            #expect(healed.body == server.imageBytes(1))
        }
    }

    @Test("stop() ends endless streams that are still running")
    func stopEndsStreams() async throws {
        let record = Shared<GalleryRequestRecord?>(nil)
        let server = GalleryServer(configuration: GalleryConfiguration(
            port: 0, faults: GalleryFaults(allImages: .endless), requestLogger: { record.set($0) }))
        let baseURL = try await server.start()
        // A reader that never hangs up on its own: reads until the server closes the connection.
        let reader = Task { try await RawHTTP.get(baseURL, "/gallery/image?1") }
        _ = await eventually(timeout: .seconds(10)) { server.activeStreamCount != 0 }
        #expect(server.activeStreamCount == 1)
        await server.stop()
        let response = try await reader.value
        #expect(response.serverClosed)
        #expect(server.activeStreamCount == 0)
        // The stream ended itself on seeing the server stop; the graceful timeout's cut would have failed its
        // write instead.
        #expect(await eventually { record.value != nil })
        #expect(record.value?.error?.contains("the server is stopping") == true, "\(String(describing: record.value))")
    }
}
