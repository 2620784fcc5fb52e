import EmbeddedHTTP
import Synchronization

/// A Linux stand-in for the book's EmojiArt gallery server, with fault injection.
///
/// Speaks the book's protocol, quirks included (see DESIGN.md §1): `GET /gallery/images` lists
/// each of `count` items three times, shuffled; `GET /gallery/image?N` answers a 360x650 PNG
/// labelled `application/octet-stream` and `filename="N.tiff"`, or, for `N % 10 == 0` and unknown
/// N, `200` with `{"error": "File not found."}`. On top of that it can misbehave on demand
/// (``GalleryFaults``), counts requests, and has control endpoints under `/_control/` for
/// scripts (`GET /_control/stats`, `POST /_control/faults`, `POST /_control/reset`).
///
/// Serves through ``EmbeddedHTTP/HTTPServer`` with ``limits``; ``start()`` returns once the socket is
/// bound, ``stop()`` shuts down gracefully and returns once every thread of the server has ended.
/// A server starts once: after ``stop()`` make a new one.
public final class GalleryServer: Sendable {
    /// The configuration the server was made with (its `faults` is the initial plan; see ``faults``).
    public let configuration: GalleryConfiguration
    private let state: GalleryState
    private let lifecycle = Mutex<Lifecycle>(.idle)

    /// Where the server is in its life. Only ever moves forward.
    private enum Lifecycle {
        case idle
        case starting
        case running(url: String, HTTPServer)
        case stopped(HTTPServer?)
    }

    /// The metrics endpoint's request and keep-alive timeouts, with room for tests that run many transfers at
    /// once and faults that sleep in the handler: 256 connections, up to 64 threads answering (a slow or
    /// endless body holds one for as long as it lasts), 60 s for a client that does not read.
    public static let limits = HTTPServerLimits(
        maximumConnections: 256, handlerThreads: 64, requestTimeout: .seconds(5), idleTimeout: .seconds(60),
        sendTimeout: .seconds(60))

    /// How long ``stop()`` lets connections finish before cutting them.
    static let gracefulStopTimeout = Duration.seconds(5)

    /// Makes a server; nothing is bound until ``start()``. The item checksums are made here.
    public init(configuration: GalleryConfiguration) {
        self.configuration = configuration
        self.state = GalleryState(count: configuration.count, faults: configuration.faults, imageSize: configuration.imageSize)
    }

    // MARK: Lifecycle

    /// Starts serving in the background; returns the base URL, e.g. "http://127.0.0.1:40123"
    /// (the bound port when port was 0).
    ///
    /// Calling it again while running returns the same URL.
    /// - Throws: ``GalleryServerError`` with `.bindFailed` if the socket cannot be bound,
    ///   `.invalidState` if a start is already under way or the server was stopped.
    public func start() async throws -> String {
        let claim: Result<Bool, GalleryServerError> = lifecycle.withLock { lifecycle in
            switch lifecycle {
            case .idle:
                lifecycle = .starting
                return .success(true)
            case .running:
                return .success(false)
            case .starting:
                return .failure(GalleryServerError(kind: .invalidState, message: "start() is already under way"))
            case .stopped:
                return .failure(GalleryServerError(kind: .invalidState, message: "the server was stopped; make a new GalleryServer"))
            }
        }
        guard try claim.get() else { return try currentURL() }
        let responder = GalleryResponder(state: state, requestLogger: configuration.requestLogger)
        let server = HTTPServer(
            host: configuration.host, port: configuration.port, maximumBodySize: GalleryResponder.maximumControlBody,
            limits: Self.limits, handler: { responder.respond(to: $0) })
        let port: Int
        do {
            port = try server.start()
        } catch {
            lifecycle.withLock { $0 = .stopped(nil) }
            throw GalleryServerError(
                kind: .bindFailed, message: "cannot serve on \(configuration.host):\(configuration.port)", underlying: error.message)
        }
        let url = "http://\(Self.urlHost(configuration.host)):\(port)"
        let stoppedMeanwhile = lifecycle.withLock { lifecycle -> Bool in
            guard case .starting = lifecycle else { return true }
            lifecycle = .running(url: url, server)
            return false
        }
        if stoppedMeanwhile {
            await server.stop(gracePeriod: .zero)
            throw GalleryServerError(kind: .stoppedBeforeReady, message: "stop() was called during start()")
        }
        return url
    }

    /// Stops serving and waits for shutdown (idempotent). Tests call this in `defer`-like cleanup.
    ///
    /// Open connections finish their current response; endless and slow bodies end at once.
    /// Anything still running after a few seconds is cut.
    public func stop() async {
        let server: HTTPServer? = lifecycle.withLock { lifecycle in
            switch lifecycle {
            case .idle, .starting:
                lifecycle = .stopped(nil)
                return nil
            case .running(_, let server):
                lifecycle = .stopped(server)
                return server
            case .stopped(let server):
                return server
            }
        }
        state.beginStopping()
        await server?.stop(gracePeriod: Self.gracefulStopTimeout)
    }

    private func currentURL() throws -> String {
        try lifecycle.withLock { lifecycle -> Result<String, GalleryServerError> in
            guard case .running(let url, _) = lifecycle else {
                return .failure(GalleryServerError(kind: .invalidState, message: "the server is not running"))
            }
            return .success(url)
        }.get()
    }

    /// The host as it goes in a URL: IPv6 literals in brackets.
    private static func urlHost(_ host: String) -> String {
        host.contains(":") ? "[\(host)]" : host
    }

    // MARK: Faults

    /// The fault plan in force now.
    public var faults: GalleryFaults {
        state.faults
    }

    /// Replaces the fault plan; takes effect for the next request. A new ``GalleryFaults/generation``
    /// changes every image's bytes.
    public func setFaults(_ faults: GalleryFaults) {
        state.setFaults(faults)
    }

    // MARK: Counting

    /// Requests to exactly this path and query since start or the last reset,
    /// e.g. `"/gallery/image?3"`, `"/gallery/images"`. Control endpoints are not counted.
    public func requestCount(path: String) -> Int {
        state.requestCount(target: path)
    }

    /// When each request to exactly this path and query arrived (this process's `ContinuousClock`), oldest
    /// first, since start or the last reset: how a test checks a client's pacing (`Retry-After`).
    public func requestTimes(path: String) -> [ContinuousClock.Instant] {
        state.arrivals(target: path)
    }

    /// When each request to `/gallery/image` with any query arrived, oldest first.
    public var imageRequestTimes: [ContinuousClock.Instant] {
        state.arrivals(prefix: GalleryCatalog.imagePath + "?")
    }

    /// The exact bytes the `large:MEGABYTES` fault serves (made on first use, then kept), for a test to compare
    /// a mirrored file with, and to have made before it measures a client.
    public func largeImageBytes(megabytes: Int) throws -> [UInt8] {
        try state.largePNG(megabytes: megabytes)
    }

    /// Requests to `/gallery/image` with any query (valid or not) since start or the last reset.
    public var imageRequestCount: Int {
        state.imageRequestCount
    }

    /// The most gallery requests (not `/_control/`) whose handler ran at once, since start or the last reset:
    /// with a `latencyMilliseconds` fault, how many requests a client had in flight at most, measured at the
    /// server. A streamed body is written after its handler returns and does not count.
    public var peakRequestsInFlight: Int {
        state.peakRequestsBeingAnswered
    }

    /// Holds image requests at the gallery until `requests` of them are being answered at once (a barrier), or
    /// until `timeout` passes; then every request is answered as usual. With it a test proves that a client
    /// overlaps its transfers without depending on how fast either side runs: ``peakRequestsInFlight`` reaches
    /// `requests` exactly when the client had that many in flight.
    public func holdImageRequests(untilAnswering requests: Int, timeout: Duration = .seconds(30)) {
        state.holdImageRequests(untilAnswering: requests, timeout: timeout)
    }

    /// Sets every request count to zero.
    public func resetCounts() {
        state.resetCounts()
    }

    /// Counts, streams in progress and the fault plan: what `GET /_control/stats` answers.
    public var stats: GalleryStats {
        state.stats
    }

    /// Responses now streaming an `endless` or `slow` body. Drops back when clients hang up,
    /// which lets a test check that the server noticed.
    public var activeStreamCount: Int {
        state.activeStreams
    }

    /// Images painted so far (at the current generation, and the previous ones' until it changed): what a
    /// test reads to see that images are made on first request, not up front.
    var paintedImageCount: Int {
        state.images.count
    }

    // MARK: Content

    /// The count items, unshuffled, N = 1...count, with this server's checksums.
    public var uniqueItems: [GalleryItem] {
        state.catalog.items
    }

    /// Whether image N answers with `{"error": "File not found."}` instead of a PNG:
    /// `N % 10 == 0` (the book's quirk) or N outside 1...count.
    public static func isErrorItem(_ n: Int, count: Int) -> Bool {
        GalleryCatalog.isErrorItem(n, count: count)
    }

    /// The exact bytes served for image N at the current generation (tests compare files byte for
    /// byte): the PNG, or the error JSON for an error item. Faults are not applied.
    public func imageBytes(_ n: Int) -> [UInt8] {
        guard !Self.isErrorItem(n, count: state.count) else {
            return Array(GalleryResponder.notFoundBody.utf8)
        }
        do {
            return try state.images.png(n: n, generation: state.faults.generation)
        } catch {
            // The size is fixed and valid, so only libpng running out of memory lands here.
            preconditionFailure("cannot encode gallery image \(n): \(error)")
        }
    }
}
