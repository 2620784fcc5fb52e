import CurlHTTP
import EmojiArtPNG

#if canImport(Glibc)
import Glibc
#endif

/// A fetched, valid asset whose bytes already sit in a private temporary file, not yet flushed: what the off-silo
/// job of a miss hands to the group commit.
public struct StagedAsset: Sendable {
    public let asset: Asset
    /// The server's `ETag` and `Last-Modified` for the bytes.
    public let validators: HTTPValidators
    /// The temporary file (in `SyncDirectory.temporaryDirectory`) holding exactly the bytes the server sent (the
    /// asset is kept without them: see `Asset.withoutBytes`).
    public let temporaryPath: String
}

extension AssetFetcher {
    /// The whole off-silo job of a miss, on the transfer thread and the task that resumes from it: fetch
    /// (unconditionally) with the body streamed into a new temporary file in `temporaryDirectory` and hashed as
    /// it arrives (`StreamedBodyFile`), then validate the PNG from that file. Memory per transfer is the write
    /// buffer, whatever the image's size. Nothing here touches the silo; the caller decides before (the path is
    /// the agent's to write) and commits after (`ImageDatabase.commit(_:tag:)`). On any failure, the body cut
    /// short, too large, never ending, not a PNG, the task cancelled, the temporary file is removed.
    @concurrent
    public func fetchAndStage(
        _ key: AssetKey, in temporaryDirectory: String, priority: RequestPriority = .normal
    ) async throws -> StagedAsset {
        let url = server.url(for: key)
        let started = ContinuousClock.now
        let (body, validators) = try await withRetries(url: url) {
            // A new file per attempt: the one of a failed attempt goes with its sink.
            let file = StreamedBodyFile(in: temporaryDirectory)
            let response = try await self.client.get(url, priority: priority, bodySink: file)
            guard response.status == 200 else { throw HTTPClientError.httpStatus(of: response) }
            return (try file.finish(), HTTPValidators(headers: response.headers))
        }
        receivedBytes.add(body.size)
        metrics.fetched(bytes: body.size, duration: started.duration(to: .now))
        let info: PNGInfo
        do {
            info = try Self.validateFile(at: body.path, size: body.size, level: verification)
        } catch {
            unlink(body.path)
            throw SyncError(.invalidImage, "\(url) did not answer with a valid PNG: \(error)", underlying: error)
        }
        return StagedAsset(
            asset: Asset(streamed: key, size: body.size, sha256: body.sha256, width: info.width, height: info.height),
            validators: validators, temporaryPath: body.path)
    }

    /// Checks the PNG in the file at `path` (`size` bytes) as `PNGValidator` checks bytes, libpng's limits
    /// included, through a read-only mapping of the file: its pages are the page cache's, read once in order,
    /// not a copy of the body in the agent's memory.
    static func validateFile(at path: String, size: Int, level: PNGVerification) throws -> PNGInfo {
        guard size > 0 else { return try PNGValidator.validate([], level: level) }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SyncError.system("open", path: path, errno: errno, hint: "cannot read the fetched body") }
        defer { close(fd) }
        guard let mapping = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), mapping != MAP_FAILED else {
            throw SyncError.system("mmap", path: path, errno: errno, hint: "cannot read the fetched body")
        }
        defer { munmap(mapping, size) }
        _ = madvise(mapping, size, MADV_SEQUENTIAL)
        let bytes = UnsafeBufferPointer(start: mapping.assumingMemoryBound(to: UInt8.self), count: size)
        return try PNGValidator.validate(bytes, level: level)
    }
}
