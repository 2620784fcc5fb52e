import Hummingbird
import Logging
import ServiceLifecycle
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
/// Runs Hummingbird 2 inside its own `ServiceGroup` on NIO's shared event loops; ``start()``
/// returns once the socket is bound, ``stop()`` shuts down gracefully. Owns no threads of its own.
/// A server starts once: after ``stop()`` make a new one.
public final class GalleryServer: Sendable {
    /// The configuration the server was made with (its `faults` is the initial plan; see ``faults``).
    public let configuration: GalleryConfiguration
    private let state: GalleryState
    private let lifecycle = Mutex<Lifecycle>(.idle)

    /// Where the server is in its life. Only ever moves forward.
    private enum Lifecycle {
        case idle
        case starting(ServiceGroup, Task<Void, Never>)
        case running(url: String, ServiceGroup, Task<Void, Never>)
        case stopped(Task<Void, Never>?)
    }

    /// How long ``stop()`` lets connections finish before cancelling them outright.
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
        let (events, continuation) = AsyncStream.makeStream(of: Result<Int, GalleryServerError>.self)
        let logger = Logger(label: "emojiart-gallery") { _ in SwiftLogNoOpLogHandler() }
        let application = Application(
            responder: GalleryResponder(state: state, requestLogger: configuration.requestLogger),
            configuration: ApplicationConfiguration(
                address: .hostname(configuration.host, port: configuration.port),
                serverName: nil
            ),
            onServerRunning: { channel in
                continuation.yield(.success(channel.localAddress?.port ?? -1))
            },
            logger: logger
        )
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [application], logger: logger))
        let host = configuration.host
        let port = configuration.port
        // Launch only from the idle state, and record it in the same critical section, so that two
        // concurrent starts cannot both run.
        let claim: Result<Task<Void, Never>, GalleryServerError>? = lifecycle.withLock { lifecycle in
            switch lifecycle {
            case .idle:
                let task = Task {
                    do {
                        try await group.run()
                        continuation.yield(.failure(GalleryServerError(kind: .stoppedBeforeReady, message: "the server stopped")))
                    } catch {
                        continuation.yield(.failure(GalleryServerError(
                            kind: .bindFailed, message: "cannot serve on \(host):\(port)", underlying: "\(error)")))
                    }
                    continuation.finish()
                }
                lifecycle = .starting(group, task)
                return .success(task)
            case .running:
                return nil
            case .starting:
                return .failure(GalleryServerError(kind: .invalidState, message: "start() is already under way"))
            case .stopped:
                return .failure(GalleryServerError(kind: .invalidState, message: "the server was stopped; make a new GalleryServer"))
            }
        }
        let task: Task<Void, Never>
        switch claim {
        case nil:
            return try currentURL()
        case .failure(let error)?:
            throw error
        case .success(let launched)?:
            task = launched
        }

        // The first event is either the bound port or the reason there is none.
        var outcome = Result<Int, GalleryServerError>.failure(
            GalleryServerError(kind: .stoppedBeforeReady, message: "the server stopped before it was ready"))
        for await event in events {
            outcome = event
            break
        }
        let url = try lifecycle.withLock { lifecycle -> Result<String, GalleryServerError> in
            guard case .starting = lifecycle else {
                return .failure(GalleryServerError(kind: .stoppedBeforeReady, message: "stop() was called during start()"))
            }
            switch outcome {
            case .success(let port):
                let url = "http://\(Self.urlHost(host)):\(port)"
                lifecycle = .running(url: url, group, task)
                return .success(url)
            case .failure(let error):
                lifecycle = .stopped(task)
                return .failure(error)
            }
        }.get()
        return url
    }

    /// Stops serving and waits for shutdown (idempotent). Tests call this in `defer`-like cleanup.
    ///
    /// Open connections finish their current response; endless and slow bodies end at once.
    /// Anything still running after a few seconds is cancelled.
    public func stop() async {
        let (group, task): (ServiceGroup?, Task<Void, Never>?) = lifecycle.withLock { lifecycle in
            switch lifecycle {
            case .idle:
                lifecycle = .stopped(nil)
                return (nil, nil)
            case .starting(let group, let task), .running(_, let group, let task):
                lifecycle = .stopped(task)
                return (group, task)
            case .stopped(let task):
                return (nil, task)
            }
        }
        state.beginStopping()
        if let group {
            await group.triggerGracefulShutdown()
        }
        guard let task else { return }
        let watchdog = Task {
            try await Task.sleep(for: Self.gracefulStopTimeout)
            task.cancel()
        }
        await task.value
        watchdog.cancel()
    }

    private func currentURL() throws -> String {
        try lifecycle.withLock { lifecycle -> Result<String, GalleryServerError> in
            guard case .running(let url, _, _) = lifecycle else {
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

    /// Requests to `/gallery/image` with any query (valid or not) since start or the last reset.
    public var imageRequestCount: Int {
        state.imageRequestCount
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
