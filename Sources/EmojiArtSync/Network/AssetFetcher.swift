import FoundationEssentials
import CurlHTTP
import EmojiArtPNG

/// Fetches the feed and assets from the gallery and judges what comes back. Stateless and `Sendable`;
/// its methods are `@concurrent`, so validation and hashing never run on an actor.
///
/// The status code is not trusted: the book's server answers `200` with a JSON error body for missing
/// images, so an asset is accepted only if its bytes pass `PNGValidator` at the configured level.
/// Transient failures (timeouts, refused connections, 5xx, truncated bodies) are retried a few times
/// with a short, growing pause before the access is reported as failed.
struct AssetFetcher: Sendable {
    let client: CurlHTTPClient
    let server: ServerAddress
    let verification: PNGVerification
    /// Extra attempts after a transient failure, within one access.
    let retries: Int
    /// Pause before the first retry; doubled for each further one.
    let retryPause: Duration
    /// Where hits, repairs, transfers and failures are counted (`SyncMetrics.off` without `--metrics-listen`).
    let metrics: SyncMetrics
    /// Bytes of asset bodies received (valid or not), shared by every copy of this fetcher.
    let receivedBytes = ReceivedBytes()
    /// The waits the gallery asked for (`Retry-After`), shared by every copy of this fetcher: every request
    /// waits its turn there first.
    let serverWaits: ServerWaits

    init(
        client: CurlHTTPClient, server: ServerAddress, verification: PNGVerification = .structure,
        retries: Int = 2, retryPause: Duration = .milliseconds(250), metrics: SyncMetrics = .off,
        maximumRetryAfter: Duration = .seconds(3600)
    ) {
        self.serverWaits = ServerWaits(maximumWait: maximumRetryAfter)
        self.client = client
        self.server = server
        self.verification = verification
        self.retries = max(0, retries)
        self.retryPause = retryPause
        self.metrics = metrics
    }

    /// Fetches and decodes the feed (unconditionally; see ``fetchFeed(validators:known:bodyFolder:)``).
    @concurrent
    func fetchFeed(bodyFolder: TemporaryFolder? = nil) async throws -> GalleryFeed {
        switch try await fetchFeed(validators: nil, bodyFolder: bodyFolder) {
        case .changed(let feed, _, _, _):
            return feed
        case .notModified, .sameBody:
            throw HTTPClientError.httpStatus(304, url: server.feedURL)
        }
    }

    /// Runs `operation`, a request for `url`, again after a transient failure, at most ``retries`` more times.
    ///
    /// Each attempt first waits its turn at ``serverWaits``. An answer that asked to wait (`Retry-After` on a
    /// `429` or `503`) is recorded there, for the whole gallery when `wholeGallery` (the feed), and its next
    /// attempt, if any is left, goes when the wait is over instead of after the short pause. `retriesUsed`: attempts
    /// already made and failed elsewhere (a request of a group fetch, `GroupFetch`): the first attempt here is a
    /// retry, after its pause, and fewer are left.
    func withRetries<Result>(
        url: String, wholeGallery: Bool = false, retriesUsed: Int = 0, _ operation: () async throws -> Result
    ) async throws -> Result {
        var attempt = retriesUsed
        if attempt > 0, serverWaits.notBefore(url) == nil { try await Task.sleep(for: retryPause * (1 << (attempt - 1))) }
        while true {
            try await serverWaits.waitTurn(for: url)
            do {
                return try await operation()
            } catch var error as HTTPClientError where error.isTransient {
                let obeyed = recordTransient(&error, wholeGallery: wholeGallery)
                guard attempt < retries else { throw error }
                if obeyed == nil { try await Task.sleep(for: retryPause * (1 << attempt)) }
                attempt += 1
            }
        }
    }

    /// Records the wait a transient failure asked for (`Retry-After`) at ``serverWaits`` and returns the wait
    /// obeyed, which `error` then carries: the caller's backoff (`ImageLoader`) sees it, not a longer one the cap cut.
    func recordTransient(_ error: inout HTTPClientError, wholeGallery: Bool) -> Duration? {
        let obeyed = serverWaits.record(error, wholeGallery: wholeGallery)
        if obeyed != nil { error.retryAfter = obeyed }
        return obeyed
    }
}
