import CurlHTTP

#if canImport(Glibc)
import Glibc
#endif

extension AssetFetcher {
    /// Fetches the feed, conditionally when `validators` are given and not empty: a `304 Not
    /// Modified` answers ``FeedFetch/notModified`` without any body being sent or decoded.
    ///
    /// The feed has its own size limit, ``GalleryFeed/maximumBodySize``, independent of the
    /// client's (`--max-body-size`, sized for images); a larger feed is refused with a
    /// `SyncError` of code `.feed` that says so. Any status but 200 and 304 throws
    /// ``HTTPClientError/Kind/httpStatus(_:)``, as does a 304 to an unconditional request. Urls among `known`
    /// (the last feed's keys) are taken as they are instead of being checked again. With `bodyFolder` (the sync
    /// directory's temporary folder) the body goes to a file there as it arrives, not into memory. A body whose
    /// SHA-256 is `unchangedDigest` (the last decoded body's) is not decoded: ``FeedFetch/sameBody(_:)``.
    ///
    /// `keepingBody`: a body that went to a file is kept for the next call (`FeedFetch.changed`'s `kept`), which
    /// gives it back as `previous` with the feed decoded from it: a body that differs from it in a few items is then
    /// decoded as the difference (`FeedDifference`).
    @concurrent
    func fetchFeed(
        validators: HTTPValidators?, known: [AssetKey] = [], bodyFolder: TemporaryFolder? = nil,
        unchangedDigest: String? = nil, keepingBody: Bool = false, previous: FeedDifference.Previous? = nil
    ) async throws -> FeedFetch {
        do {
            return try await fetchFeedOnce(
                validators: validators, known: known, bodyFolder: bodyFolder, unchangedDigest: unchangedDigest,
                keepingBody: keepingBody, previous: previous)
        } catch is FeedBodyNotStored {
            // DIR's temporary folder cannot take the body (read-only, full): the feed is read into memory instead,
            // so that the agent goes on polling and answering while it cannot write (man page, "tmp/").
            return try await fetchFeedOnce(
                validators: validators, known: known, bodyFolder: nil, unchangedDigest: unchangedDigest,
                keepingBody: false, previous: nil)
        }
    }

    /// A body decoded on the blocking-I/O pool, and the file it was kept in; or the last body's bytes again.
    private enum DecodedBody: Sendable {
        case feed(GalleryFeed, kept: KeptFeedBody?)
        case sameBytes
    }

    /// The body of the feed could not be written to its temporary file.
    private struct FeedBodyNotStored: Error {}

    private func fetchFeedOnce(
        validators: HTTPValidators?, known: [AssetKey], bodyFolder: TemporaryFolder?, unchangedDigest: String?,
        keepingBody: Bool, previous: FeedDifference.Previous?
    ) async throws -> FeedFetch {
        let url = server.feedURL
        let headers = validators?.conditionalRequestHeaders ?? HTTPHeaders()
        // A body that goes to a file while the last one is kept is compared with it (`FeedDifference`), which says
        // whether it is the same bytes: no SHA-256 of it (a tenth of a changed feed's pass at 100,000 items).
        let comparing = previous != nil
        let (response, bodyFile): (HTTPResponse, StreamedBodyFile?)
        do {
            (response, bodyFile) = try await withRetries(url: url, wholeGallery: true) {
                let sink = bodyFolder.map { StreamedBodyFile(in: $0, hashing: !comparing) }
                do {
                    let response = try Self.checked(
                        try await self.client.get(url, headers: headers, maxBodySize: GalleryFeed.maximumBodySize, bodySink: sink),
                        conditional: !headers.isEmpty)
                    return (response, sink)
                } catch {
                    if sink?.couldNotStore == true { throw FeedBodyNotStored() }
                    throw error
                }
            }
        } catch let error as HTTPClientError {
            if case .tooLarge(let limit) = error.kind {
                throw SyncError(
                    .feed, "feed at \(url) is larger than \(Self.mebibytes(limit)), the feed's limit; refusing it",
                    underlying: error)
            }
            throw error
        }
        if response.status == 304 { return .notModified }
        let received = HTTPValidators(headers: response.headers)
        // Decoded on the blocking-I/O pool, not on one of the cooperative pool's threads (two on this kind of
        // machine): a 35 MB feed takes a few hundred milliseconds, in which the silo would have one thread left.
        let feed: GalleryFeed
        let digest: String
        var kept: KeptFeedBody?
        if let bodyFile {
            // Written to a temporary file as it came: a small body is still whole in the write buffer (and never
            // made a file); a large one is read from the file's mapping, given back as it is read (`MappedFeedBody`), so the feed is
            // never held as anonymous memory (36 MB at 100,000 items).
            let finished = try bodyFile.finish()
            // Empty when not hashed (compared instead): never the same as a digest.
            if !finished.sha256.isEmpty, finished.sha256 == unchangedDigest { return .sameBody(received) }
            digest = finished.sha256
            let decoded = try await BlockingIO.run { () throws(SyncError) -> DecodedBody in
                guard let path = finished.path else {
                    return .feed(try GalleryFeed.decode(finished.bytes ?? [], known: known), kept: nil)
                }
                // Through the descriptor the body was written with: the file read, and kept, is the one written.
                let descriptor = try bodyFile.reopenFinishedFile()
                defer { close(descriptor) }
                let body = try MappedFeedBody(descriptor: descriptor, count: finished.size, path: path)
                guard case .feed(let feed, let layout, let asDifference) = try GalleryFeed.decode(body, known: known, previous: previous)
                else { return .sameBytes }
                guard keepingBody else { return .feed(feed, kept: nil) }
                do {
                    let kept = try KeptFeedBody.keep(
                        descriptor: descriptor, path: path, bodySize: body.count, layout: layout, decodedAsDifference: asDifference)
                    return .feed(feed, kept: kept)
                } catch {
                    // Not kept (a full disk): the next changed feed is read whole, nothing else is lost.
                    return .feed(feed, kept: nil)
                }
            }
            switch decoded {
            case .sameBytes: return .sameBody(received)
            case .feed(let decodedFeed, let keptBody): (feed, kept) = (decodedFeed, keptBody)
            }
            // The sink removes its file when it goes: not before the mapping above has opened it (Swift may end
            // a value's life right after its last use, `finish()`).
            withExtendedLifetime(bodyFile) {}
        } else {
            let body = response.body
            digest = SHA256Digest.hex(of: body)
            if digest == unchangedDigest { return .sameBody(received) }
            feed = try await BlockingIO.run { try GalleryFeed.decode(body, known: known) }
        }
        return .changed(feed, received, bodyDigest: digest, kept: kept)
    }

    /// `64 MiB` for a whole number of mebibytes, else ``ByteCount/format(_:)``.
    private static func mebibytes(_ bytes: Int) -> String {
        bytes % (1024 * 1024) == 0 ? "\(bytes / (1024 * 1024)) MiB" : ByteCount.format(bytes)
    }

    /// `response` if it is a 200, or a 304 to a conditional request; otherwise throws
    /// ``HTTPClientError/Kind/httpStatus(_:)`` (inside the retries, so a 5xx is retried; a 304 to
    /// an unconditional request is an error: there is nothing it could refer to).
    private static func checked(_ response: HTTPResponse, conditional: Bool) throws(HTTPClientError) -> HTTPResponse {
        guard response.status == 200 || (response.status == 304 && conditional) else {
            throw HTTPClientError.httpStatus(of: response)
        }
        return response
    }
}
