import CurlHTTP

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
    /// (unconditionally), validate, hash, and write the bytes to a new temporary file in `temporaryDirectory`.
    /// Nothing here touches the silo; the caller decides before (the path is the agent's to write) and commits
    /// after (`ImageDatabase.commit(_:tag:)`).
    /// Bodies up to this size are written to their temporary file where they were hashed, larger ones on the
    /// blocking-I/O pool (`BlockingIO`).
    static let inlineWriteLimit = 64 * 1024

    @concurrent
    public func fetchAndStage(
        _ key: AssetKey, in temporaryDirectory: String, priority: RequestPriority = .normal
    ) async throws -> StagedAsset {
        guard case .fetched(let asset, let validators) = try await fetchAsset(key, validators: nil, priority: priority),
            let bytes = asset.bytes
        else {
            throw SyncError(.server, "\(server.url(for: key)) answered 304 to an unconditional request")
        }
        // A small body is copied into the page cache here, on the thread that hashed it (the file is not flushed:
        // the committer flushes a batch at once); handing it to the blocking-I/O pool would cost two thread
        // hand-offs per file for a few microseconds of work. A large one, whose write can take long, goes there.
        let path = bytes.count <= Self.inlineWriteLimit
            ? try DiskStorage.writeTemporaryFileNow(bytes, in: temporaryDirectory)
            : try await DiskStorage.writeTemporaryFile(bytes, in: temporaryDirectory)
        // The bytes are in the file now: what waits for the commit (up to the access window's 512 misses, 25 MB of
        // full-size images) holds the asset without them.
        return StagedAsset(asset: asset.withoutBytes, validators: validators, temporaryPath: path)
    }
}
