import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import Logging
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Server and network faults, seen from the agent: the files in DIR, its log lines and its report. The bundled
/// gallery produces what it can (going away, a feed over the limit); `TestHTTPServer` serves the gallery's
/// content with the bytes the gallery cannot send (a reset in mid-body, a lying `Content-Length`, redirects).
/// Each test checks for a clear line or reason naming the problem, no partial file in DIR or its tmp/, nothing
/// already synced lost, and recovery once the server behaves.
@Suite(.timeLimit(.minutes(3)))
struct NetworkFaultTests {
    /// The names of the asset files in `dir` and their bytes.
    static func assetFiles(_ dir: TemporaryDirectory) -> [String: [UInt8]] {
        Dictionary(uniqueKeysWithValues: dir.names().filter { $0.hasSuffix(".png") }.map { ($0, readBytes(dir.file($0)) ?? []) })
    }

    /// The `event=asset result=failed` lines for `n`.
    static func failureLines(_ n: Int, in dir: TemporaryDirectory) -> [String] {
        logLines(dir.path).filter {
            let fields = $0.split(separator: " ")
            return fields.contains("event=asset") && fields.contains("result=failed") && fields.contains("key=/gallery/image?\(n)")
        }
    }

    // MARK: - The gallery going away

    /// An outage of minutes or hours behaves the same as this one of a few seconds: the feed poll backs off
    /// (1 s doubling to a 30 s cap) and the first poll that succeeds catches up on everything.
    @Test func theGalleryGoingAwayAndComingBackIsSurvivedAndEverythingComesBack() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let port = try gallery.port()
        let dir = TemporaryDirectory("outage")
        let agent = try await gallery.startAgent(dir: dir) {
            $0.http.retryPolicy = RetryPolicy(base: .milliseconds(200), cap: .seconds(1), jitter: 0.2)
        }
        let synced = Self.assetFiles(dir)
        #expect(synced.count == 9)

        await gallery.stop()
        await agent.keeper.pollNow()
        let refused = "connection refused by 127.0.0.1:\(port) (is the gallery running?)"
        #expect(await eventually {
            logLines(dir.path).contains { $0.contains("event=poll") && $0.contains("result=failed") && $0.contains(refused) }
        }, "no failed poll line naming the refused connection")
        #expect(await eventually { (try? AgentStatus.read(from: dir.file(".emojiart-sync/status.json")))?.lastPoll?.result == "failed" })
        // While the gallery is away the user deletes a file: its repair fails, saying why, and nothing else moves.
        unlink(dir.file("gallery_image_4.png"))
        #expect(await eventually { Self.failureLines(4, in: dir).contains { $0.contains(refused) } })
        var during = synced
        during["gallery_image_4.png"] = nil
        #expect(Self.assetFiles(dir) == during, "nothing already synced is lost, nothing partial appears")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)

        // The gallery comes back on the same port (new process: new tags, same images). Nobody helps the agent.
        let back = GalleryServer(configuration: GalleryConfiguration(host: "127.0.0.1", port: port, count: 9))
        _ = try await back.start()
        let recovered = await eventually(timeout: .seconds(60)) {
            (1...9).allSatisfy { readBytes(dir.file("gallery_image_\($0).png")) == back.imageBytes($0) }
        }
        #expect(recovered, "the deleted file came back on the agent's own retry")
        #expect(await eventually {
            let status = try? AgentStatus.read(from: dir.file(".emojiart-sync/status.json"))
            return status?.lastPoll?.result == "ok" && status?.assets.ok == 9 && status?.assets.missing == 0
        }, "the status shows the recovery")
        #expect(logLines(dir.path).contains { $0.contains("event=poll") && $0.contains("result=ok") })
        #expect(await agent.stop() == .success)
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        await back.stop()
    }

    // MARK: - DNS

    @Test func aServerNameThatDoesNotResolveFailsTheRunNamingTheHostAndWritesNothing() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let dir = TemporaryDirectory("dns")
        _ = try await gallery.syncOnce(dir: dir.path)
        await gallery.stop()
        let before = Self.assetFiles(dir)
        #expect(before.count == 5)

        let out = TemporaryDirectory("dns-out")
        let run = try await AgentProcess.run(
            ["--dir", dir.path, "--server", "http://gallery.invalid:8080", "--once", "-q"], outputDirectory: out.path)
        #expect(run.status == ExitStatus.fatal.rawValue)
        #expect(run.stderr.contains("could not resolve host gallery.invalid"), "\(run.stderr)")
        #expect(logLines(dir.path).contains {
            $0.contains("event=feed") && $0.contains("result=failed") && $0.contains("could not resolve host gallery.invalid")
        })
        #expect(Self.assetFiles(dir) == before, "nothing written, nothing lost")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
    }

    // MARK: - Broken transfers

    @Test func aConnectionResetInTheMiddleOfABodyFailsThatAssetOnlyAndTheNextPassFetchesIt() async throws {
        let gallery = try await GalleryFixture(count: 6)
        let misbehave = Shared(true)
        let image = gallery.server.imageBytes(3)
        let server = try TestHTTPServer { request in
            let target = request.target
            guard target == "/gallery/image?3", misbehave.value else { return gallery.reply(for: target) }
            return .lying(declaredLength: image.count, body: Array(image.prefix(image.count / 2)), ending: .reset)
        }
        defer { server.stop() }
        let address = try ServerAddress(server.origin)
        let dir = TemporaryDirectory("reset")

        let report = try await gallery.syncOnce(dir: dir.path) { $0.http.server = address }
        #expect(report.failures.map(\.key.rawValue) == ["/gallery/image?3"])
        let reason = report.failures.first?.reason ?? ""
        #expect(reason.contains("connection to 127.0.0.1:\(server.port) broke during \(server.origin)/gallery/image?3"), "\(reason)")
        #expect(reason.contains("errno \(ECONNRESET)"), "\(reason)")
        #expect(Self.failureLines(3, in: dir).count == 1)
        #expect(!FileManager.default.fileExists(atPath: dir.file("gallery_image_3.png")), "no partial file")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        #expect([1, 2, 4, 5, 6].allSatisfy { gallery.isMirrored($0, in: dir) }, "the rest of the gallery synced")

        misbehave.set(false)
        let next = try await gallery.syncOnce(dir: dir.path) { $0.http.server = address }
        #expect(next.isComplete)
        #expect((1...6).allSatisfy { gallery.isMirrored($0, in: dir) })
        #expect(server.targets.filter { $0 == "/gallery/image?3" }.count == 2)
        await gallery.stop()
    }

    /// (a) A `Content-Length` longer than the body (the whole, valid PNG) and then the end of the connection:
    /// curl says the transfer ended early, and the PNG that did arrive is not taken. (b) One shorter than the
    /// PNG: curl takes that many bytes and the PNG check refuses the cut image.
    @Test func aContentLengthThatLiesIsRefusedAndNothingIsWritten() async throws {
        let gallery = try await GalleryFixture(count: 6)
        let misbehave = Shared(true)
        let longer = gallery.server.imageBytes(2)
        let shorter = gallery.server.imageBytes(4)
        let server = try TestHTTPServer { request in
            let target = request.target
            guard misbehave.value else { return gallery.reply(for: target) }
            switch target {
            case "/gallery/image?2": return .lying(declaredLength: longer.count + 100, body: longer, ending: .close)
            case "/gallery/image?4": return .lying(declaredLength: shorter.count / 2, body: shorter, ending: .close)
            default: return gallery.reply(for: target)
            }
        }
        defer { server.stop() }
        let address = try ServerAddress(server.origin)
        let dir = TemporaryDirectory("content-length")

        let report = try await gallery.syncOnce(dir: dir.path) { $0.http.server = address }
        let failed = Dictionary(uniqueKeysWithValues: report.failures.map { ($0.key.rawValue, $0.reason) })
        #expect(Set(failed.keys) == ["/gallery/image?2", "/gallery/image?4"])
        #expect(failed["/gallery/image?2"]?.contains("transfer ended early: got \(longer.count) of \(longer.count + 100) bytes") == true, "\(failed)")
        #expect(failed["/gallery/image?4"]?.contains("\(server.origin)/gallery/image?4 did not answer with a valid PNG") == true, "\(failed)")
        #expect(Self.failureLines(2, in: dir).count == 1 && Self.failureLines(4, in: dir).count == 1)
        #expect(!FileManager.default.fileExists(atPath: dir.file("gallery_image_2.png")))
        #expect(!FileManager.default.fileExists(atPath: dir.file("gallery_image_4.png")))
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        #expect([1, 3, 5, 6].allSatisfy { gallery.isMirrored($0, in: dir) })

        misbehave.set(false)
        let next = try await gallery.syncOnce(dir: dir.path) { $0.http.server = address }
        #expect(next.isComplete, "\(next.failures)")
        #expect((1...6).allSatisfy { gallery.isMirrored($0, in: dir) })
        await gallery.stop()
    }

    // MARK: - Redirects

    /// A redirect is never followed, for an image or for the feed, whatever host it names: the agent only ever
    /// talks to its configured origin. The other host serves the real content, so following it would have worked.
    @Test func redirectsToAnotherHostAreNotFollowed() async throws {
        let gallery = try await GalleryFixture(count: 5)
        let elsewhere = try TestHTTPServer(host: "127.0.0.2") { gallery.reply(for: $0.target) }
        defer { elsewhere.stop() }
        let redirectFeed = Shared(false)
        let front = try TestHTTPServer { request in
            let target = request.target
            if target == "/gallery/image?3" {
                return .respond(status: 302, headers: [("Location", elsewhere.origin + target)])
            }
            if target == "/gallery/images", redirectFeed.value {
                return .respond(status: 301, headers: [("Location", elsewhere.origin + target)])
            }
            return gallery.reply(for: target)
        }
        defer { front.stop() }
        let address = try ServerAddress(front.origin)
        let dir = TemporaryDirectory("redirect")

        let report = try await gallery.syncOnce(dir: dir.path) { $0.http.server = address }
        #expect(report.failures.map(\.key.rawValue) == ["/gallery/image?3"])
        let reason = report.failures.first?.reason ?? ""
        #expect(reason.contains("HTTP 302 from \(front.origin)/gallery/image?3"), "\(reason)")
        #expect(reason.contains("redirect to \(elsewhere.origin)/gallery/image?3 not followed"), "\(reason)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("gallery_image_3.png")))
        #expect([1, 2, 4, 5].allSatisfy { gallery.isMirrored($0, in: dir) })
        let synced = Self.assetFiles(dir)

        redirectFeed.set(true)
        let error = await #expect(throws: (any Error).self) {
            _ = try await gallery.syncOnce(dir: dir.path) { $0.http.server = address }
        }
        let message = error.map { String(describing: $0) } ?? ""
        #expect(message.contains("HTTP 301 from \(front.origin)/gallery/images"), "\(message)")
        #expect(message.contains("redirect to \(elsewhere.origin)/gallery/images not followed"), "\(message)")
        #expect(logLines(dir.path).contains { $0.contains("event=feed") && $0.contains("result=failed") && $0.contains("HTTP 301") })
        #expect(elsewhere.targets.isEmpty, "a request reached the other host: \(elsewhere.targets)")
        #expect(Self.assetFiles(dir) == synced, "nothing lost")
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        await gallery.stop()
    }

    // MARK: - A feed over the limit

    /// The gallery lists one extra url as long as the feed's limit (`GalleryFeed.maximumBodySize`, 64 MiB, not
    /// configurable), so its feed is larger than the limit: the poll is refused and deletes nothing.
    @Test func aFeedLargerThanItsLimitIsRefusedAndDeletesNothing() async throws {
        let gallery = try await GalleryFixture(count: 9)
        let dir = TemporaryDirectory("huge-feed")
        // Debug: the recovery below is a 304 poll, logged at that level.
        let agent = try await gallery.startAgent(dir: dir) { $0.logging.level = .debug }
        let synced = Self.assetFiles(dir)

        let huge = pathLongerThanTheFeedLimit()
        gallery.server.setFaults(GalleryFaults(extraFeedURLs: [huge]))
        await agent.keeper.pollNow()
        let limit = "\(gallery.baseURL)/gallery/images is larger than 64 MiB, the feed's limit; refusing it"
        #expect(await eventually {
            logLines(dir.path).contains { $0.contains("event=poll") && $0.contains("result=failed") && $0.contains(limit) }
        }, "no failed poll line naming the limit")
        #expect(Self.assetFiles(dir) == synced, "nothing deleted")

        gallery.server.setFaults(.none)
        let seen = logLines(dir.path).count
        // The feed's own retry (1 s after the first failure) finds it as it was before: 304, not modified.
        let recovered = await eventually(timeout: .seconds(60)) {
            logLines(dir.path).dropFirst(seen).contains { $0.contains("event=poll") && !$0.contains("result=failed") }
        }
        #expect(recovered, "\(logLines(dir.path).dropFirst(seen).joined(separator: "\n"))")
        #expect(Self.assetFiles(dir) == synced)
        #expect(dir.names(in: ".emojiart-sync/tmp").isEmpty)
        #expect(await agent.stop() == .success)
        await gallery.stop()
    }
}
