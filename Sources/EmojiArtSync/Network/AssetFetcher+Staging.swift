import CurlHTTP
import EmojiArtPNG

#if canImport(Glibc)
import Glibc
#endif

/// A fetched, valid asset whose bytes already sit in a private temporary file, not yet flushed: what the off-silo
/// job of a miss hands to the group commit.
struct StagedAsset: Sendable {
    let asset: Asset
    /// The server's `ETag` and `Last-Modified` for the bytes.
    let validators: HTTPValidators
    /// The file holding exactly the bytes the server sent (the asset is kept without them: see
    /// `Asset.withoutBytes`), with no name yet or in `SyncDirectory.temporaryDirectory`, and its identity.
    let file: StagedFile
    /// The bytes are durable already (a repair's, flushed while DIR's deletions held it back): the committer
    /// renames it without flushing it again.
    var flushed = false
}

/// What a fetch that may be conditional came to: `304 Not Modified` (no body, no file), or a staged asset.
enum StagedFetch: Sendable {
    /// The server says the asset is the one the validators describe.
    case notModified
    /// A `200` whose body is a valid PNG, in its temporary file.
    case staged(StagedAsset)
}

/// How a fetch's temporary file, a new name in the state directory's `tmp/`, waits for the `RenameGate`, shut
/// while DIR is being emptied: a name made there while `rm -rf DIR` is inside it makes `rm` fail ("Directory not
/// empty").
enum TemporaryFileGate: Sendable {
    /// A repair the watcher asked for, whose check and fetch do not wait for DIR's deletions to pause: a body that
    /// fits the write buffer is written and flushed into a file with no name while the gate is shut and named once it
    /// opens (`StreamedBodyFile.storeFlushed`; where the file system has no unnamed files it waits in the buffer); one
    /// that outgrows the buffer while the gate is shut fails (the caller waits for the gate before fetching a file it
    /// knows to be that large).
    case unnamedWhileShut(RenameGate)
    /// A pass's fetch: a body that fits the write buffer (a gallery's images mostly do) waits there for the gate
    /// before its file is made, then is flushed with the rest of its batch; a larger one makes its file as its
    /// bytes come, whatever the gate says (failing it for a person's lone deletion would cost a retry).
    case waitsInBuffer(RenameGate)

    var gate: RenameGate {
        switch self {
        case .unnamedWhileShut(let gate), .waitsInBuffer(let gate): gate
        }
    }
}

extension AssetFetcher {
    /// The whole off-silo job of a miss, on the transfer thread and the task that resumes from it: fetch
    /// (unconditionally) with the body streamed into a new temporary file in `temporaryDirectory` and hashed as
    /// it arrives (`StreamedBodyFile`), then validate the PNG (from the write buffer when the whole body fitted
    /// in it, which a small image does: no file is made for a body that is no PNG, and none is read back; else from
    /// the file). Memory per transfer is the write
    /// buffer, whatever the image's size. Nothing here touches the silo; the caller decides before (the path is
    /// the agent's to write) and commits after (`GroupCommitter.publish(_:tag:)`). On any failure, the body cut
    /// short, too large, never ending, not a PNG, the task cancelled, the temporary file is removed.
    ///
    /// With `gate` the file is named only while the `RenameGate` is open (see `TemporaryFileGate`). `retriesUsed`:
    /// attempts a group fetch made for the key already (`GroupFetch`); the first one here is then a retry
    /// (`withRetries`).
    @concurrent
    func fetchAndStage(
        _ key: AssetKey, in temporaryFolder: TemporaryFolder, priority: RequestPriority = .normal,
        gate: TemporaryFileGate? = nil, retriesUsed: Int = 0
    ) async throws -> StagedAsset {
        switch try await fetchAndStage(
            key, in: temporaryFolder, validators: nil, priority: priority, gate: gate, retriesUsed: retriesUsed)
        {
        case .staged(let staged):
            return staged
        case .notModified:
            // Unreachable: a 304 to an unconditional request is refused below as the error it is.
            throw HTTPClientError.httpStatus(304, url: server.url(for: key))
        }
    }

    /// ``fetchAndStage(_:in:priority:)``, conditionally when `validators` are given and not empty (a refresh: the
    /// feed's tag changed): a `304 Not Modified` answers ``StagedFetch/notModified`` with no file made; a `200`
    /// goes to its temporary file and is validated from it exactly as a miss's body is, under the same body limit.
    /// Any other status throws ``HTTPClientError/Kind/httpStatus(_:)``, as does a 304 to an unconditional request.
    @concurrent
    func fetchAndStage(
        _ key: AssetKey, in temporaryFolder: TemporaryFolder, validators: HTTPValidators?, priority: RequestPriority = .normal,
        gate: TemporaryFileGate? = nil, retriesUsed: Int = 0
    ) async throws -> StagedFetch {
        let url = server.url(for: key)
        let headers = validators?.conditionalRequestHeaders ?? HTTPHeaders()
        let started = ContinuousClock.now
        let isOpen: (@Sendable () -> Bool)? = if case .unnamedWhileShut(let gate) = gate { { gate.isOpen } } else { nil }
        let answer = try await withRetries(url: url, retriesUsed: retriesUsed) { () async throws -> Answer? in
            // A new file per attempt: the one of a failed attempt goes with its sink. A 304 makes none.
            let file = StreamedBodyFile(in: temporaryFolder, mayMakeFile: isOpen)
            do {
                let response = try await self.client.get(url, headers: headers, priority: priority, bodySink: file)
                return try Self.answer(response, in: file, conditional: !headers.isEmpty)
            } catch {
                file.discard()
                throw error
            }
        }
        // Until it is handed on, the file goes with its sink (removed) on any failure below.
        guard let answer else {
            metrics.fetched(bytes: 0, duration: started.duration(to: .now))
            return .notModified
        }
        return .staged(try await stage(answer, of: key, url: url, in: temporaryFolder, started: started, gate: gate))
    }

    /// A `200` whose body went to its sink: the sink, the finished body, and the server's validators.
    typealias Answer = (file: StreamedBodyFile, body: StreamedBodyFile.Finished, validators: HTTPValidators)

    /// What `response` to a request whose body went to `file` came to: the finished body of a `200`, nil for a
    /// `304` to a `conditional` request. Throws the status error of any other answer
    /// (`HTTPClientError.httpStatus(of:)`, its `Retry-After` with it).
    static func answer(_ response: HTTPResponse, in file: StreamedBodyFile, conditional: Bool) throws -> Answer? {
        if response.status == 304 && conditional { return nil }
        guard response.status == 200 else { throw HTTPClientError.httpStatus(of: response) }
        return (file, try file.finish(), HTTPValidators(headers: response.headers))
    }

    /// The part of a fetch after its answer, in the caller's task: counted, the PNG validated (from the write buffer
    /// when the whole body fitted in it, else from the file), and the temporary file named once the gate allows
    /// (`TemporaryFileGate`). On any failure the temporary file is removed.
    func stage(
        _ answer: Answer, of key: AssetKey, url: String, in temporaryFolder: TemporaryFolder,
        started: ContinuousClock.Instant, gate: TemporaryFileGate?
    ) async throws -> StagedAsset {
        let (file, body, newValidators) = answer
        receivedBytes.add(body.size)
        metrics.fetched(bytes: body.size, duration: started.duration(to: .now))
        let info: PNGInfo
        let stored: StagedFile
        var flushed = false
        do {
            // A body that fitted in the write buffer is checked from it, before any file is made; a larger one from
            // its file.
            if let path = body.path {
                info = try Self.validateFile(at: path, size: body.size, level: verification)
            } else {
                info = try PNGValidator.validate(body.bytes ?? [], level: verification)
            }
            // A file is named only once DIR is not being emptied (`RenameGate`); meanwhile a repair's is written and
            // flushed with no name, and a pass's goes to a file with no name, or (none left in the ration) waits in
            // the buffer.
            if case .unnamedWhileShut(let gate) = gate, body.path == nil, let unnamed = try await file.storeFlushed(once: gate) {
                (stored, flushed) = (unnamed, true)
            } else if body.path == nil, let unnamed = try file.storeUnnamed(flushing: false) {
                stored = unnamed
            } else {
                if let gate = gate?.gate, body.path == nil, let gone = await gate.waitUntilOpen() {
                    throw SyncError(
                        .system, "\(temporaryFolder.path) is being removed (\(gone)): the body of \(url) is not written there",
                        path: temporaryFolder.path)
                }
                stored = try file.storeNamed()
            }
        } catch let defect as PNGDefect {
            file.discard()
            throw SyncError(.invalidImage, "\(url) did not answer with a valid PNG: \(defect)", underlying: defect)
        } catch {
            file.discard()
            throw error
        }
        return StagedAsset(
            asset: Asset(streamed: key, size: body.size, sha256: body.sha256, width: info.width, height: info.height),
            validators: newValidators, file: stored, flushed: flushed)
    }

    /// Checks the PNG in the file at `path` (`size` bytes) as `PNGValidator` checks bytes, libpng's limits
    /// included, reading it through fixed buffers (`PNGValidator.validate(file:...)`): memory does not grow with the
    /// body. Throws the `PNGDefect` of bytes that are no PNG, a `.system` error when the file cannot be read.
    static func validateFile(at path: String, size: Int, level: PNGVerification) throws -> PNGInfo {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw SyncError.system("open", path: path, errno: errno, hint: "cannot read the fetched body") }
        defer { close(fd) }
        do throws(PNGFileFailure) {
            return try PNGValidator.validate(file: fd, size: size, level: level)
        } catch {
            switch error {
            case .defect(let defect):
                throw defect
            case .unreadable(let call, let code):
                throw SyncError.system(call, path: path, errno: code, hint: "cannot read the fetched body")
            }
        }
    }
}
