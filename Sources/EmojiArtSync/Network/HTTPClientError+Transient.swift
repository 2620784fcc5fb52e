import CurlHTTP

extension HTTPClientError {
    /// Whether trying the same request again soon may succeed: the server was away, slow, overloaded or
    /// cut the transfer short. A 4xx, an oversized body or a refused URL will fail the same way again.
    var isTransient: Bool {
        switch kind {
        case .refused, .timedOut, .truncated, .transport, .resolveFailed:
            return true
        case .httpStatus(let status):
            return status >= 500 || status == 429 || status == 408
        case .tooLarge, .unsupportedURL, .invalidRequest, .tls, .cancelled:
            return false
        }
    }
}
