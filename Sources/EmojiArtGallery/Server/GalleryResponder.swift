import EmbeddedHTTP
import EmojiArtPNG
import FoundationEssentials
import HTTPTypes

/// Answers every request the gallery gets: the book's two endpoints, quirks included, the
/// control endpoints, and 404 for the rest.
///
/// One responder rather than a `Router` plus middleware, so that counting, the injected latency,
/// the choice of fault and the log line all come from one place and see the same fault plan
/// snapshot. Every answer, errors included, is a response. Runs on the connection's thread (``EmbeddedHTTP``),
/// so the injected latency and the paced bodies simply block it.
struct GalleryResponder: Sendable {
    let state: GalleryState
    let requestLogger: (@Sendable (GalleryRequestRecord) -> Void)?

    /// The body the book's server sends, with status 200, for an image it does not have.
    static let notFoundBody = #"{"error": "File not found."}"#
    /// ``notFoundBody`` as bytes.
    static let notFoundBytes = Array(notFoundBody.utf8)

    /// Largest fault plan `POST /_control/faults` accepts.
    static let maximumControlBody = 1 << 20

    func respond(to request: HTTPServerRequest) -> HTTPServerResponse {
        let target = request.target
        let path = String(request.path)
        let answer: Answer
        if path.hasPrefix("/_control/") {
            answer = control(request, path: path)
        } else {
            state.recordRequest(target: target, isImage: path == GalleryCatalog.imagePath)
            state.answering(true)
            defer { state.answering(false) }
            if path == GalleryCatalog.imagePath {
                state.attendMeeting()
            }
            let faults = state.faults
            if faults.latencyMilliseconds > 0 {
                _ = state.pause(milliseconds: faults.latencyMilliseconds)
            }
            answer = gallery(request, path: path, faults: faults)
        }
        return logged(answer, method: request.head.method.rawValue, target: target)
    }

    /// A response and the name of the fault that shaped it, for the log.
    struct Answer {
        var response: HTTPServerResponse
        var fault: String = "none"
    }

    // MARK: The book's endpoints

    private func gallery(_ request: HTTPServerRequest, path: String, faults: GalleryFaults) -> Answer {
        guard path == GalleryCatalog.feedPath || path == GalleryCatalog.imagePath else {
            return Answer(response: Self.json(status: .notFound, #"{"error": "Not found."}"#))
        }
        guard request.head.method == .get else {
            return Answer(response: Self.methodNotAllowed(allow: "GET"))
        }
        if path == GalleryCatalog.feedPath {
            if let throttle = faults.feedThrottle, let left = state.throttled(target: request.target, by: throttle) {
                return Self.throttled(throttle, left: left)
            }
            return feed(request.head, faults: faults)
        }
        return image(request.head, query: request.query.map(String.init) ?? "", faults: faults)
    }

    /// `GET /gallery/images`: every item three times, shuffled afresh for each request.
    ///
    /// Sends `ETag` and `Last-Modified` (see ``GalleryRevision``) and answers a conditional request
    /// they satisfy with `304` and no body, before the feed is encoded.
    private func feed(_ head: HTTPRequest, faults: GalleryFaults) -> Answer {
        if let status = faults.feedStatus {
            return Answer(
                response: Self.json(status: .init(code: status), #"{"error": "Feed unavailable (injected fault)."}"#),
                fault: "feedStatus:\(status)"
            )
        }
        let validators = state.revision.feedValidators(for: faults)
        let fault = faults.emptyFeed ? "emptyFeed" : "none"
        if validators.notModified(for: head) {
            return Answer(response: Self.notModified(validators), fault: fault)
        }
        if faults.emptyFeed {
            return Answer(response: Self.json(status: .ok, "[]", validators: validators), fault: fault)
        }
        let dropped = Set(faults.droppedItems)
        // Item N is at index N - 1.
        let items = dropped.isEmpty
            ? state.catalog.items
            : state.catalog.items.enumerated().filter { !dropped.contains($0.offset + 1) }.map(\.element)
        let extras = faults.extraFeedURLs.enumerated().map { index, url in
            GalleryItem(name: "Injected \(index + 1)", url: url, price: 0, checksum: "injected-\(index + 1)")
        }
        let listing = (faults.unshuffledFeed ? items + items + items : (items + items + items).shuffled()) + extras
        do {
            let data = try Self.jsonEncoder().encode(listing)
            return Answer(response: Self.json(status: .ok, bytes: Array(data), validators: validators))
        } catch {
            return Answer(response: Self.json(status: .internalServerError, Self.errorJSON("cannot encode the feed: \(error)")))
        }
    }

    /// `GET /gallery/image?N`: the PNG, the book's error JSON, or a fault.
    ///
    /// A PNG or error item sent whole (healthy, `corrupt`, `changing`) carries `ETag` and
    /// `Last-Modified` of exactly those bytes, and a conditional request they satisfy gets `304`;
    /// the transport faults (`truncated`, `slow`, `endless`, `serverError`) send no validators and
    /// never answer 304, so they always show.
    private func image(_ head: HTTPRequest, query: String, faults: GalleryFaults) -> Answer {
        guard let n = Int(query), !GalleryCatalog.isErrorItem(n, count: state.count) else {
            let validators = state.revision.validators(of: Self.notFoundBytes)
            if validators.notModified(for: head) {
                return Answer(response: Self.notModified(validators))
            }
            return Answer(response: Self.json(status: .ok, bytes: Self.notFoundBytes, validators: validators))
        }
        var fault = faults.fault(forImage: n)
        if case .throttle(let throttle) = fault {
            if let left = state.throttled(target: GalleryCatalog.imagePath + "?" + query, by: throttle) {
                return Self.throttled(throttle, left: left)
            }
            fault = nil  // the window is over: the image as it is
        }
        if fault == .serverError {
            return Answer(
                response: Self.json(status: .internalServerError, #"{"error": "Internal server error (injected fault)."}"#),
                fault: ImageFault.serverError.name
            )
        }
        if case .large(let megabytes) = fault {
            do {
                let png = try state.largePNG(megabytes: megabytes)
                return Answer(response: Self.png(n: n, body: FaultBodies.sliced(png)), fault: fault?.name ?? "large")
            } catch {
                return Answer(response: Self.json(status: .internalServerError, Self.errorJSON(error.description)))
            }
        }
        if fault == .endless {
            return Answer(response: Self.png(n: n, body: FaultBodies.endless(state: state)), fault: ImageFault.endless.name)
        }
        let png: [UInt8]
        do {
            if fault == .changing {
                png = try state.images.size.png(n: n, generation: faults.generation, stamp: state.nextChangeStamp())
            } else {
                png = try state.images.png(n: n, generation: faults.generation)
            }
        } catch {
            return Answer(response: Self.json(status: .internalServerError, Self.errorJSON(error.description)))
        }
        let body: HTTPServerResponseBody
        switch fault {
        case nil, .changing, .corrupt:
            let bytes = fault == .corrupt ? FaultBodies.corrupted(png) : png
            let validators = fault == .changing ? GalleryRevision.unique(bytes) : state.revision.validators(of: bytes)
            let faultName = fault?.name ?? "none"
            if validators.notModified(for: head) {
                return Answer(response: Self.notModified(validators), fault: faultName)
            }
            var response = Self.png(n: n, body: .bytes(bytes))
            response.head.headerFields.append(contentsOf: validators.headerFields)
            return Answer(response: response, fault: faultName)
        case .truncated:
            body = FaultBodies.truncated(png)
        case .slow(let milliseconds):
            body = FaultBodies.slow(png, milliseconds: milliseconds, state: state)
        case .serverError, .endless, .throttle, .large:
            preconditionFailure("answered above")
        }
        return Answer(response: Self.png(n: n, body: body), fault: fault?.name ?? "none")
    }

    // MARK: Control endpoints

    private func control(_ request: HTTPServerRequest, path: String) -> Answer {
        switch (path, request.head.method) {
        case ("/_control/stats", .get):
            return Answer(response: Self.json(status: .ok, encoding: state.stats))
        case ("/_control/faults", .post):
            do {
                let faults = try JSONDecoder().decode(GalleryFaults.self, from: Data(request.body))
                state.setFaults(faults)
                return Answer(response: Self.json(status: .ok, encoding: faults))
            } catch {
                return Answer(response: Self.json(status: .badRequest, Self.errorJSON("invalid fault plan: \(error)")))
            }
        case ("/_control/reset", .post):
            state.resetCounts()
            return Answer(response: Self.json(status: .ok, encoding: state.stats))
        case ("/_control/stats", _):
            return Answer(response: Self.methodNotAllowed(allow: "GET"))
        case ("/_control/faults", _), ("/_control/reset", _):
            return Answer(response: Self.methodNotAllowed(allow: "POST"))
        default:
            return Answer(response: Self.json(status: .notFound, #"{"error": "Not found."}"#))
        }
    }

    // MARK: Logging

    /// Logs the request once its body is written or abandoned, with the number of bytes that really went out.
    private func logged(_ answer: Answer, method: String, target: String) -> HTTPServerResponse {
        guard let requestLogger else { return answer.response }
        var response = answer.response
        let status = response.head.status.code
        let fault = answer.fault
        response.onFinish = { bytes, error in
            requestLogger(GalleryRequestRecord(
                method: method, path: target, status: status, bytes: bytes, fault: fault, error: error.map { "\($0)" }))
        }
        return response
    }

    // MARK: Building responses

    /// A PNG response with the book's headers: `application/octet-stream` and the lying
    /// `Content-Disposition: filename="N.tiff"`.
    private static func png(n: Int, body: HTTPServerResponseBody) -> HTTPServerResponse {
        HTTPServerResponse(
            status: .ok,
            headerFields: [.contentType: "application/octet-stream", .contentDisposition: "filename=\"\(n).tiff\""],
            body: body
        )
    }

    /// A ``Throttle``'s answer, `left` whole seconds before its window ends: its status, `Retry-After`, a JSON body.
    private static func throttled(_ throttle: Throttle, left: Duration) -> Answer {
        var response = json(
            status: .init(code: throttle.status), #"{"error": "Slow down (injected fault)."}"#)
        response.head.headerFields[.retryAfter] = throttle.retryAfter(remaining: left)
        return Answer(response: response, fault: throttle.name)
    }

    /// `304 Not Modified`: the validators and no body (RFC 9110 section 15.4.5).
    private static func notModified(_ validators: ResourceValidators) -> HTTPServerResponse {
        HTTPServerResponse(status: .notModified, headerFields: validators.headerFields)
    }

    private static func json(status: HTTPResponse.Status, bytes: [UInt8], validators: ResourceValidators) -> HTTPServerResponse {
        var response = json(status: status, bytes: bytes)
        response.head.headerFields.append(contentsOf: validators.headerFields)
        return response
    }

    private static func json(status: HTTPResponse.Status, _ text: String, validators: ResourceValidators) -> HTTPServerResponse {
        json(status: status, bytes: Array(text.utf8), validators: validators)
    }

    private static func json(status: HTTPResponse.Status, _ text: String) -> HTTPServerResponse {
        json(status: status, bytes: Array(text.utf8))
    }

    private static func json(status: HTTPResponse.Status, bytes: [UInt8]) -> HTTPServerResponse {
        HTTPServerResponse(status: status, headerFields: [.contentType: "application/json"], body: .bytes(bytes))
    }

    private static func json(status: HTTPResponse.Status, encoding value: some Encodable) -> HTTPServerResponse {
        do {
            let encoder = jsonEncoder()
            return json(status: status, bytes: Array(try encoder.encode(value)))
        } catch {
            return json(status: .internalServerError, errorJSON("cannot encode the answer: \(error)"))
        }
    }

    /// The encoder for every JSON answer: sorted keys, so answers are byte-stable, and `/` left
    /// unescaped, so urls read as the book's server writes them (`"/gallery/image?3"`).
    private static func jsonEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return encoder
    }

    private static func methodNotAllowed(allow: String) -> HTTPServerResponse {
        var response = json(status: .methodNotAllowed, #"{"error": "Method not allowed."}"#)
        response.head.headerFields[.allow] = allow
        return response
    }

    /// `{"error": message}` with the message escaped as a JSON string.
    private static func errorJSON(_ message: String) -> String {
        let encoded = (try? JSONEncoder().encode(["error": message])).map { String(decoding: $0, as: UTF8.self) }
        return encoded ?? #"{"error": "internal error"}"#
    }
}
