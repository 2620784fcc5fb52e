#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A rate limiter's answer, for testing a client's politeness: `429 Too Many Requests` or `503 Service
/// Unavailable` with a `Retry-After` of ``seconds``, sent as delay-seconds or as an HTTP-date.
///
/// Once per path and fault plan: the first request opens a window of ``seconds``; every request inside it is
/// answered with the status and the time left; the first request after it is served normally, and so is every
/// one after that until the plan changes. So a polite client sees one throttled answer and then its content.
///
/// Written `throttle:STATUS:SECONDS`, with `:date` for the HTTP-date form (`throttle:429:2`,
/// `throttle:503:3:date`), as an image fault and as the feed's (`GalleryFaults/feedThrottle`).
public struct Throttle: Sendable, Equatable, Hashable {
    /// 429 or 503.
    public var status: Int
    /// The window, in whole seconds.
    public var seconds: Int
    /// `Retry-After` as an HTTP-date (the end of the window) instead of delay-seconds.
    public var asHTTPDate: Bool

    /// Creates a throttle; `status` must be 429 or 503 for the name to parse back.
    public init(status: Int = 429, seconds: Int, asHTTPDate: Bool = false) {
        self.status = status
        self.seconds = seconds
        self.asHTTPDate = asHTTPDate
    }

    /// `throttle:429:2`, `throttle:503:3:date`.
    public var name: String {
        "throttle:\(status):\(seconds)" + (asHTTPDate ? ":date" : "")
    }

    /// Parses ``name``'s format; nil for anything else.
    public init?(name: String) {
        let parts = name.split(separator: ":", omittingEmptySubsequences: false)
        guard (3...4).contains(parts.count), parts[0] == "throttle", let status = Int(parts[1]), [429, 503].contains(status),
            let seconds = Int(parts[2]), seconds >= 0, parts.count == 3 || parts[3] == "date"
        else { return nil }
        self.init(status: status, seconds: seconds, asHTTPDate: parts.count == 4)
    }

    /// The `Retry-After` value for a request `remaining` before the window ends, rounded up to whole seconds
    /// (what either form can say), so a client that obeys it never asks inside the window.
    func retryAfter(remaining: Duration) -> String {
        let (seconds, attoseconds) = remaining.components
        guard asHTTPDate else { return String(seconds + (attoseconds > 0 ? 1 : 0)) }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let end = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9 + Double(seconds) + Double(attoseconds) / 1e18
        return HTTPDate.format(Int(end.rounded(.up)))
    }
}

extension Throttle: Codable {
    /// Decodes the string form described on ``Throttle``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let throttle = Throttle(name: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "unknown throttle \"\(text)\"; expected throttle:STATUS:SECONDS[:date]")
        }
        self = throttle
    }

    /// Encodes the string form described on ``Throttle``.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(name)
    }
}
