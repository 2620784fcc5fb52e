import CurlHTTP

/// The fetches of several keys that are not stored (a pass's misses), as one submission to the HTTP client
/// (`TransferBatch`): their answers come back together as they finish, and the one task that waits for them stages
/// each as `AssetFetcher.fetchAndStage` stages one (`AssetFetcher.stage`: validated, hashed, in its temporary file),
/// so a miss costs no task, continuation or thread wakeup of its own. The requests wait for transfer slots in the
/// client's queue like any others (a repair's urgent request still starts first).
///
/// Owns each request's body sink until its answer is staged or refused. A transient failure is not retried here:
/// its `Retry-After` is recorded (`ServerWaits`) and the key is handed back (`Outcome.again`) to be asked for alone
/// through `fetchAndStage`, with its retries and pauses; so is a redirect, which only `get` follows.
struct GroupFetch: Sendable {
    /// What one key's fetch came to.
    enum Outcome: Sendable {
        case staged(StagedAsset)
        case failed(any Error)
        /// To be asked for again alone (`fetchAndStage` with `retriesUsed`): the attempt made here failed for now,
        /// or was a redirect.
        case again(retriesUsed: Int)
    }

    private let fetcher: AssetFetcher
    private let keys: [AssetKey]
    private let files: [StreamedBodyFile]
    private let batch: TransferBatch
    private let folder: TemporaryFolder
    private let gate: RenameGate
    private let started: ContinuousClock.Instant

    /// Submits the fetches of `keys` at once, their bodies going to new temporary files in `folder`, each named only
    /// while `gate` is open (`TemporaryFileGate.waitsInBuffer`).
    init(_ keys: [AssetKey], fetcher: AssetFetcher, folder: TemporaryFolder, gate: RenameGate) {
        self.fetcher = fetcher
        self.keys = keys
        self.folder = folder
        self.gate = gate
        let files = keys.map { _ in StreamedBodyFile(in: folder) }
        self.files = files
        started = .now
        batch = fetcher.client.submit(zip(keys, files).map { key, file in
            TransferBatch.Request(url: fetcher.server.url(for: key), bodySink: file)
        })
    }

    /// The fetches that finished since the last call, each staged or refused, by the key's position in the keys
    /// given; waits while none has. Empty once every one was handed out. Cancelling the task cancels the fetches
    /// not finished (they end `.failed(CancellationError())`).
    func next() async -> [(index: Int, outcome: Outcome)] {
        var outcomes: [(index: Int, outcome: Outcome)] = []
        for (index, result) in await batch.next() {
            outcomes.append((index, await outcome(of: result, at: index)))
        }
        return outcomes
    }

    /// Stops every fetch not finished yet.
    func cancel() {
        batch.cancel()
    }

    private func outcome(of result: Result<HTTPResponse, any Error>, at index: Int) async -> Outcome {
        let file = files[index]
        let key = keys[index]
        let answer: AssetFetcher.Answer
        do {
            let response = try result.get()
            if (300..<400).contains(response.status), response.redirectURL != nil {
                file.discard()
                return .again(retriesUsed: 0)
            }
            // Never nil: a 304 to an unconditional request is refused as the error it is.
            guard let answered = try AssetFetcher.answer(response, in: file, conditional: false) else {
                throw HTTPClientError.httpStatus(of: response)
            }
            answer = answered
        } catch var error as HTTPClientError where error.isTransient {
            file.discard()
            _ = fetcher.recordTransient(&error, wholeGallery: false)
            return fetcher.retries > 0 ? .again(retriesUsed: 1) : .failed(error)
        } catch {
            file.discard()
            return .failed(error)
        }
        do {
            return .staged(try await fetcher.stage(
                answer, of: key, url: fetcher.server.url(for: key), in: folder, started: started, gate: .waitsInBuffer(gate)))
        } catch {
            return .failed(error)
        }
    }
}
