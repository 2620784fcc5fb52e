import CurlHTTP
import Testing

/// `Retry-After` as RFC 9110 section 10.2.3 defines it: delay-seconds or an HTTP-date in any of its three forms,
/// read only from a `429` or `503`.
@Suite("Retry-After", .timeLimit(.minutes(1)))
struct RetryAfterTests {
    /// 1994-11-06 08:49:37 UTC, the RFC's example date.
    static let example = 784_111_777.0

    @Test("delay-seconds is read as seconds")
    func delaySeconds() {
        #expect(RetryAfter.wait("120") == .seconds(120))
        #expect(RetryAfter.wait(" 0 ") == .zero)
        #expect(RetryAfter.wait("99999999999999999999") == .seconds(365 * 86_400), "an absurd value saturates, it does not wrap")
    }

    @Test("each form of an HTTP-date is the time left until it", arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
    ])
    func httpDate(_ form: String) {
        #expect(RetryAfter.wait(form, now: Self.example - 30) == .seconds(30))
        #expect(RetryAfter.wait(form, now: Self.example + 5) == .zero, "a date in the past asks for no wait")
    }

    @Test("anything else is no Retry-After", arguments: ["", "soon", "-5", "1.5", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:00:00 GMT"])
    func garbage(_ value: String) {
        #expect(RetryAfter.wait(value) == nil)
    }

    @Test("a 429 or 503 carries the wait in its error; other statuses do not")
    func onlyThrottlingStatuses() {
        func error(_ status: Int) -> HTTPClientError {
            .httpStatus(of: HTTPResponse(
                url: "http://g/x", status: status, headers: HTTPHeaders([.init(name: "Retry-After", value: "7")]), body: []))
        }
        #expect(error(429).retryAfter == .seconds(7))
        #expect(error(503).retryAfter == .seconds(7))
        #expect(error(503).message.contains("Retry-After: 7"))
        #expect(error(500).retryAfter == nil)
        #expect(error(301).retryAfter == nil)
    }
}
