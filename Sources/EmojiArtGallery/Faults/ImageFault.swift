/// A way the gallery misbehaves when serving one image, for testing the agent's defences.
///
/// Faults apply only to images that exist (N in 1...count and N % 10 != 0). The error items
/// always answer `200` with `{"error": "File not found."}`: that answer is itself the book's quirk.
///
/// JSON form (used by `POST /_control/faults`): a string, `"corrupt"`, `"truncated"`,
/// `"serverError"`, `"endless"`, `"changing"`, `"slow:MILLISECONDS"` (e.g. `"slow:250"`), or
/// `"throttle:STATUS:SECONDS[:date]"` (``Throttle``), or `"large:MEGABYTES"` (1...1024).
/// Strings rather than Swift's synthesized `{"slow":{"milliseconds":250}}` so that a shell
/// script can write a fault plan by hand.
public enum ImageFault: Sendable, Equatable, Hashable {
    /// A PNG with a valid signature and chunk framing, but one byte inside the first IDAT chunk
    /// flipped and the CRC left as it was: a structural check (CRC) or a full decode catches it.
    case corrupt
    /// Headers announce the full `Content-Length`, then about half the body is sent and the
    /// connection is closed. A client sees a transfer that ends early (curl: `CURLE_PARTIAL_FILE`).
    case truncated
    /// `500 Internal Server Error` with a small JSON body.
    case serverError
    /// `200` and a chunked body of garbage that never ends: the server writes until the client
    /// hangs up (or the server stops). Never buffered: each write waits for the socket.
    case endless
    /// Every response is a different valid PNG: a per-request counter is drawn into the image.
    case changing
    /// The normal PNG, but the body trickles out in slices spread over `milliseconds`
    /// (headers go first), so the whole transfer takes at least that long.
    case slow(milliseconds: Int)
    /// `429` or `503` with a `Retry-After`, once per path (``Throttle``), then the normal PNG.
    case throttle(Throttle)
    /// A valid PNG of about `megabytes` MiB of pseudo-random pixels stored uncompressed instead of the painted one
    /// (a photo-sized body), streamed in slices; the same bytes for every image and request while the server runs.
    case large(megabytes: Int)

    /// The fault's name in logs and JSON: `corrupt`, `slow:250`, ...
    public var name: String {
        switch self {
        case .corrupt: "corrupt"
        case .truncated: "truncated"
        case .serverError: "serverError"
        case .endless: "endless"
        case .changing: "changing"
        case .slow(let milliseconds): "slow:\(milliseconds)"
        case .throttle(let throttle): throttle.name
        case .large(let megabytes): "large:\(megabytes)"
        }
    }

    /// Parses ``name``'s format; `nil` for anything else (including a negative slow duration).
    public init?(name: String) {
        switch name {
        case "corrupt": self = .corrupt
        case "truncated": self = .truncated
        case "serverError": self = .serverError
        case "endless": self = .endless
        case "changing": self = .changing
        default:
            if let throttle = Throttle(name: name) {
                self = .throttle(throttle)
                return
            }
            if name.hasPrefix("large:"), let megabytes = Int(name.dropFirst("large:".count)), (1...1024).contains(megabytes) {
                self = .large(megabytes: megabytes)
                return
            }
            guard name.hasPrefix("slow:"), let milliseconds = Int(name.dropFirst("slow:".count)), milliseconds >= 0 else {
                return nil
            }
            self = .slow(milliseconds: milliseconds)
        }
    }
}

extension ImageFault: Codable {
    /// Decodes the string form described on ``ImageFault``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let fault = ImageFault(name: text) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "unknown image fault \"\(text)\"; expected corrupt, truncated, serverError, endless, changing, slow:MILLISECONDS, throttle:STATUS:SECONDS[:date] or large:MEGABYTES"
            )
        }
        self = fault
    }

    /// Encodes the string form described on ``ImageFault``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
