import EmojiArtPNG
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Everything a running gallery shares between its request handlers: the catalog, the image
/// cache, the fault plan, request counts and the stop flag.
///
/// One `Mutex` guards the small mutable part; every critical section is a few dictionary
/// operations, never I/O or painting, so connection threads never wait long. The catalog
/// is immutable after init and the image cache has its own lock.
final class GalleryState: Sendable {
    /// Number of unique items (N = 1...count).
    let count: Int
    /// Names, urls, prices and checksums for this server lifetime.
    let catalog: GalleryCatalog
    /// Encoded PNGs, made on first request.
    let images: GalleryImageCache
    /// What the `ETag` and `Last-Modified` answers are made from.
    let revision: GalleryRevision

    private struct Mutable {
        var faults: GalleryFaults
        var counts: [String: Int] = [:]
        var total = 0
        var imageRequests = 0
        var changeStamp = 0
        var activeStreams = 0
        var stopping = false
        var requestsBeingAnswered = 0
        var peakRequestsBeingAnswered = 0
        var meeting: Meeting?
        /// When the latest requests arrived (``arrivalsKept`` each), by path and query (for tests of a client's pacing).
        var arrivals: [String: [ContinuousClock.Instant]] = [:]
        /// The end of each path's ``Throttle`` window under the plan in force.
        var throttleWindows: [String: ContinuousClock.Instant] = [:]
    }

    /// Image requests held until this many requests are being answered at once (see ``holdImageRequests``).
    private struct Meeting {
        var requests: Int
        var deadline: ContinuousClock.Instant
    }

    private let mutable: Mutex<Mutable>
    /// Arrival times kept per target (the latest): enough for a test, bounded for a gallery that serves for days.
    static let arrivalsKept = 64

    init(count: Int, faults: GalleryFaults, imageSize: GalleryImageSize) {
        self.count = count
        self.images = GalleryImageCache(size: imageSize)
        self.catalog = GalleryCatalog(count: count)
        self.revision = GalleryRevision(catalog: catalog, faults: faults)
        self.mutable = Mutex(Mutable(faults: faults))
    }

    // MARK: Faults

    /// The fault plan in force.
    var faults: GalleryFaults {
        mutable.withLock { $0.faults }
    }

    /// Replaces the fault plan; a new generation drops the previous generation's cached images.
    func setFaults(_ faults: GalleryFaults) {
        let generationChanged = mutable.withLock { state in
            defer {
                state.faults = faults
                state.throttleWindows = [:]
            }
            return state.faults.generation != faults.generation
        }
        revision.planChanged(to: faults)
        if generationChanged {
            images.keepOnly(generation: faults.generation)
        }
    }

    /// A fresh number for each response of the `changing` fault (1, 2, 3, ...).
    func nextChangeStamp() -> Int {
        mutable.withLock { state in
            state.changeStamp += 1
            return state.changeStamp
        }
    }

    /// The `large` fault's PNGs, by size in MiB, made once each.
    private let largeImages = Mutex<[Int: [UInt8]]>([:])

    /// The `large:MEGABYTES` fault's PNG, made on first use and kept.
    func largePNG(megabytes: Int) throws(PNGEncodingError) -> [UInt8] {
        if let made = largeImages.withLock({ $0[megabytes] }) { return made }
        let png = try FaultBodies.largePNG(megabytes: megabytes)
        largeImages.withLock { $0[megabytes] = png }
        return png
    }

    // MARK: Counting

    /// Counts one request to `target` (path and query); `isImage` adds it to the image total.
    func recordRequest(target: String, isImage: Bool) {
        mutable.withLock { state in
            state.counts[target, default: 0] += 1
            state.arrivals[target, default: []].append(.now)
            if state.arrivals[target, default: []].count > Self.arrivalsKept { state.arrivals[target]?.removeFirst() }
            state.total += 1
            if isImage { state.imageRequests += 1 }
        }
    }

    /// A counted request's handler starts (its latency fault included) or ends: the client cannot have its
    /// answer before the end, so the peak is an upper bound no client can exceed by a race.
    func answering(_ starts: Bool) {
        mutable.withLock { state in
            state.requestsBeingAnswered += starts ? 1 : -1
            state.peakRequestsBeingAnswered = max(state.peakRequestsBeingAnswered, state.requestsBeingAnswered)
        }
    }

    /// Holds every image request's handler until `requests` are being answered at once, or until `timeout`
    /// has passed; then the meeting is over and later requests are answered at once. How a test makes
    /// overlapping transfers certain instead of likely: a client that keeps `requests` transfers in flight
    /// meets at once, one that sends them one at a time keeps the first waiting until the timeout, and the
    /// peak then says 1.
    func holdImageRequests(untilAnswering requests: Int, timeout: Duration) {
        mutable.withLock { $0.meeting = Meeting(requests: requests, deadline: .now.advanced(by: timeout)) }
    }

    /// Called by an image request's handler while it is counted as being answered: returns once the meeting
    /// (if any) is over, the server stops or the meeting's timeout passes.
    func attendMeeting() {
        while true {
            let waiting = mutable.withLock { state -> Bool in
                guard let meeting = state.meeting else { return false }
                if state.stopping || state.requestsBeingAnswered >= meeting.requests || .now >= meeting.deadline {
                    state.meeting = nil
                    return false
                }
                return true
            }
            guard waiting else { return }
            usleep(500)
        }
    }

    /// The most requests answered at once since start or the last reset.
    var peakRequestsBeingAnswered: Int {
        mutable.withLock { $0.peakRequestsBeingAnswered }
    }

    /// Requests to exactly `target` since start or the last reset.
    func requestCount(target: String) -> Int {
        mutable.withLock { $0.counts[target] ?? 0 }
    }

    /// When each request to exactly `target` arrived, oldest first, since start or the last reset.
    func arrivals(target: String) -> [ContinuousClock.Instant] {
        mutable.withLock { $0.arrivals[target] ?? [] }
    }

    /// When each request whose target starts with `prefix` arrived, oldest first.
    func arrivals(prefix: String) -> [ContinuousClock.Instant] {
        mutable.withLock { state in state.arrivals.filter { $0.key.hasPrefix(prefix) }.flatMap(\.value).sorted() }
    }

    /// Whether a request to `target` now falls in its ``Throttle`` window (the first one opens it): the time left
    /// of it; nil once the window is over (the request is served).
    func throttled(target: String, by throttle: Throttle) -> Duration? {
        let now = ContinuousClock.now
        return mutable.withLock { state -> Duration? in
            guard let end = state.throttleWindows[target] else {
                state.throttleWindows[target] = now.advanced(by: .seconds(throttle.seconds))
                return .seconds(throttle.seconds)
            }
            return now < end ? now.duration(to: end) : nil
        }
    }

    /// Requests to `/gallery/image` with any query.
    var imageRequestCount: Int {
        mutable.withLock { $0.imageRequests }
    }

    /// Sets every count to zero.
    func resetCounts() {
        mutable.withLock { state in
            state.counts = [:]
            state.arrivals = [:]
            state.total = 0
            state.imageRequests = 0
            state.peakRequestsBeingAnswered = state.requestsBeingAnswered
        }
    }

    /// A snapshot for `GET /_control/stats`.
    var stats: GalleryStats {
        mutable.withLock { state in
            GalleryStats(
                total: state.total, imageRequests: state.imageRequests, paths: state.counts,
                activeStreams: state.activeStreams, faults: state.faults
            )
        }
    }

    // MARK: Streams and stopping

    /// Marks the start of a long-running body (endless, slow); pair with ``streamEnded()``.
    func streamStarted() {
        mutable.withLock { $0.activeStreams += 1 }
    }

    /// Marks the end of a long-running body.
    func streamEnded() {
        mutable.withLock { $0.activeStreams -= 1 }
    }

    /// Long-running bodies now in progress.
    var activeStreams: Int {
        mutable.withLock { $0.activeStreams }
    }

    /// Tells long-running bodies and pauses to finish now: the server is stopping.
    func beginStopping() {
        mutable.withLock { $0.stopping = true }
    }

    /// Whether ``beginStopping()`` was called.
    var isStopping: Bool {
        mutable.withLock { $0.stopping }
    }

    /// Blocks the calling thread (a connection's own) for `milliseconds`, in short steps so that a stopping
    /// server does not wait out a long injected delay. Returns false if it was cut short.
    func pause(milliseconds: Int) -> Bool {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(milliseconds))
        while clock.now < deadline {
            if isStopping { return false }
            // Not below zero: the deadline can pass between the loop's test and this read (usleep of a negative
            // count crashed a loaded test run).
            let step = max(.zero, min(Duration.milliseconds(20), clock.now.duration(to: deadline)))
            let (seconds, attoseconds) = step.components
            usleep(UInt32(seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
        }
        return !isStopping
    }
}
