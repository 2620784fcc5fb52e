import CurlHTTP
import FoundationEssentials
import Synchronization

/// The waits the gallery asked for with `Retry-After` on a `429` or `503`, and the one rule they make: no
/// request for a URL before its wait is over, and none at all before the gallery's is (a `Retry-After` on the
/// feed pauses polls and images alike). Every request of an `AssetFetcher` passes ``waitTurn(for:)`` first,
/// whichever path made it (a pass, a retry, a repair), so the rule holds in one place.
///
/// A wait is capped at ``maximumWait`` (`--max-retry-after`), so a hostile or mistaken value cannot park the
/// agent for longer. Owned by the fetcher (every copy shares it); its state is a few instants behind a `Mutex`,
/// read and written from whatever thread finished a transfer.
final class ServerWaits: Sendable {
    /// One wait the server asked for, as `status` and the log show it.
    struct Wait: Sendable, Equatable {
        /// The URL that answered (the feed's for a wait of the whole gallery).
        var url: String
        /// Whether it pauses the whole gallery (the feed answered) or only its URL.
        var wholeGallery: Bool
        /// `HTTP 429`, `HTTP 503`.
        var status: Int
        /// When the wait is over.
        var until: ContinuousClock.Instant
        /// The same moment on the wall clock, for people.
        var untilDate: Date
        /// How long it is, from when it was recorded (capped).
        var obeyed: Duration
        /// Whether the server asked for longer than ``ServerWaits/maximumWait`` and was cut to it.
        var capped: Bool
    }

    /// What is being waited for now, for `status`: the gallery's pause if there is one, else how many URLs wait
    /// and until when the last of them does.
    struct Summary: Sendable, Equatable {
        var wholeGallery: Bool
        /// URLs waiting (1 for the gallery's pause).
        var urls: Int
        /// When the last wait is over.
        var until: Date
        /// The status the server answered with (the latest wait's).
        var status: Int
    }

    private struct State {
        var gallery: Wait?
        var urls: [String: Wait] = [:]
        var observer: (@Sendable (Wait) -> Void)?
    }

    private let state = Mutex(State())
    /// The longest wait obeyed.
    let maximumWait: Duration

    init(maximumWait: Duration = .seconds(3600)) {
        self.maximumWait = maximumWait
    }

    /// Calls `observer` for every wait recorded from now on (the agent logs it and refreshes `status`).
    func observe(_ observer: @escaping @Sendable (Wait) -> Void) {
        state.withLock { $0.observer = observer }
    }

    /// Records the wait `error` asks for, if any (a `429` or `503` with a `Retry-After`); `wholeGallery` when
    /// the feed answered. Returns the wait obeyed (capped), nil when there was none.
    func record(_ error: HTTPClientError, wholeGallery: Bool) -> Duration? {
        guard let asked = error.retryAfter, case .httpStatus(let status) = error.kind else { return nil }
        let capped = asked > maximumWait
        let wait = min(asked, maximumWait)
        let entry = Wait(
            url: error.url, wholeGallery: wholeGallery, status: status, until: .now.advanced(by: wait),
            untilDate: Date().addingTimeInterval(wait.seconds), obeyed: wait, capped: capped)
        let observer = state.withLock { state in
            if wholeGallery {
                state.gallery = entry
            } else {
                state.urls[error.url] = entry
            }
            state.urls = state.urls.filter { $0.value.until > .now }
            return state.observer
        }
        observer?(entry)
        return wait
    }

    /// When a request for `url` may go out (nil: now).
    func notBefore(_ url: String) -> ContinuousClock.Instant? {
        let now = ContinuousClock.now
        let (gallery, own) = state.withLock { ($0.gallery?.until, $0.urls[url]?.until) }
        let latest = [gallery, own].compactMap { $0 }.max()
        return latest.flatMap { $0 > now ? $0 : nil }
    }

    /// Returns when a request for `url` may go out: at once, or when the waits the server asked for it and for
    /// the whole gallery are over. Throws `CancellationError` if the task is cancelled meanwhile.
    func waitTurn(for url: String) async throws {
        while let until = notBefore(url) {
            try await Task.sleep(until: until, clock: .continuous)
        }
    }

    /// The wait for `url` (its own or the gallery's, whichever ends later), for a failure's next retry time.
    func remaining(for url: String) -> Duration? {
        notBefore(url).map { ContinuousClock.now.duration(to: $0) }
    }

    /// What is waited for now; nil when nothing is.
    var summary: Summary? {
        let now = ContinuousClock.now
        return state.withLock { state -> Summary? in
            if let gallery = state.gallery, gallery.until > now {
                return Summary(wholeGallery: true, urls: 1, until: gallery.untilDate, status: gallery.status)
            }
            let waiting = state.urls.values.filter { $0.until > now }
            guard let last = waiting.max(by: { $0.until < $1.until }) else { return nil }
            return Summary(wholeGallery: false, urls: waiting.count, until: last.untilDate, status: last.status)
        }
    }

    /// `2026-11-26T14:03:07Z`: a wait's end in a log line.
    static func timestamp(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }
}
