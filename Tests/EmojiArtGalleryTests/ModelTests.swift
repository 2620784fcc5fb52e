import EmojiArtGallery
import Foundation
import TestSupport
import Testing

@Suite("Fault plans, request records and their text forms")
struct ModelTests {
    @Test(
        "ImageFault names round-trip through JSON",
        arguments: [ImageFault.corrupt, .truncated, .serverError, .endless, .changing, .slow(milliseconds: 250)]
    )
    func faultNames(fault: ImageFault) throws {
        #expect(ImageFault(name: fault.name) == fault)
        let json = try JSONEncoder().encode([fault])
        #expect(String(decoding: json, as: UTF8.self) == "[\"\(fault.name)\"]")
        #expect(try JSONDecoder().decode([ImageFault].self, from: json) == [fault])
    }

    @Test("unknown or malformed fault names are rejected", arguments: ["", "slow", "slow:", "slow:-5", "slow:abc", "Corrupt", "server-error"])
    func badFaultNames(name: String) {
        #expect(ImageFault(name: name) == nil)
    }

    @Test("a full plan round-trips through JSON; a missing key takes its default")
    func planCodable() throws {
        let plan = GalleryFaults(
            latencyMilliseconds: 5, emptyFeed: true, feedStatus: 500,
            imageFaults: [1: .changing, 12: .slow(milliseconds: 3)], allImages: .truncated, generation: 9)
        #expect(try JSONDecoder().decode(GalleryFaults.self, from: JSONEncoder().encode(plan)) == plan)
        #expect(try JSONDecoder().decode(GalleryFaults.self, from: Data("{}".utf8)) == .none)
        #expect(try JSONDecoder().decode(GalleryFaults.self, from: Data(#"{"generation": 3}"#.utf8)) == GalleryFaults(generation: 3))
    }

    @Test("fault(forImage:) prefers the image's own entry over allImages")
    func faultLookup() {
        let plan = GalleryFaults(imageFaults: [2: .corrupt], allImages: .endless)
        #expect(plan.fault(forImage: 2) == .corrupt)
        #expect(plan.fault(forImage: 3) == .endless)
        #expect(GalleryFaults.none.fault(forImage: 3) == nil)
    }

    @Test("request records print as logfmt, quoting only values that need it")
    func logfmt() {
        let plain = GalleryRequestRecord(method: "GET", path: "/gallery/image?3", status: 200, bytes: 41234, fault: "none")
        #expect(plain.logfmt == "method=GET path=/gallery/image?3 status=200 bytes=41234 fault=none")
        let odd = GalleryRequestRecord(method: "GET", path: "/a b=\"c\"", status: 200, bytes: 1, fault: "slow:5", error: "gone\naway")
        #expect(odd.logfmt == #"method=GET path="/a b=\"c\"" status=200 bytes=1 fault=slow:5 error="gone\naway""#)
    }

    @Test("the request logger sees every request once its body is done, with the bytes sent", .timeLimit(.minutes(1)))
    func requestLogger() async throws {
        let record = Shared<GalleryRequestRecord?>(nil)
        try await withGallery(faults: GalleryFaults(imageFaults: [3: .truncated]), requestLogger: { record.set($0) }) { server, baseURL in
            let image = try await fetch(baseURL, "/gallery/image?2")
            try #require(await eventually(timeout: .seconds(10)) { record.value?.path == "/gallery/image?2" })
            #expect(record.value == GalleryRequestRecord(
                method: "GET", path: "/gallery/image?2", status: 200, bytes: image.body.count, fault: "none"))

            _ = try await RawHTTP.get(baseURL, "/gallery/image?3")
            try #require(await eventually(timeout: .seconds(10)) { record.value?.path == "/gallery/image?3" })
            let truncated = try #require(record.value)
            #expect(truncated.fault == "truncated")
            #expect(truncated.bytes == server.imageBytes(3).count / 2)
            #expect(truncated.error != nil)
        }
    }
}
