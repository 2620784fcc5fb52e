import CCurl

/// A URL this client is willing to open, checked and taken apart by libcurl's own URL parser
/// (`curl_url`, `curl_url_set`, `curl_url_get`).
///
/// Parsing with the same code that will later open the URL means "valid here" and "valid for
/// the transfer" cannot disagree. Only `http` and `https` pass: anything else (`ftp://`,
/// `file:///etc/passwd`, `gopher://`) is refused before a transfer exists, so a hostile feed
/// cannot make the agent read local files or talk other protocols. The transfer also limits
/// protocols (`CURLOPT_PROTOCOLS_STR`) as a second line of defence.
struct CurlURL: Sendable {
    /// The URL as given.
    let string: String
    /// `http` or `https`.
    let scheme: String
    /// The host as written in the URL (IPv6 addresses keep their brackets).
    let host: String
    /// The port, explicit or the scheme's default (80, 443).
    let port: Int

    /// `host:port`, for messages such as "connection refused by 127.0.0.1:8080".
    var authority: String { "\(host):\(port)" }

    /// Parses `string`, or throws ``HTTPClientError/Kind/unsupportedURL`` saying why not.
    init(_ string: String) throws(HTTPClientError) {
        try CurlGlobal.ensureInitialized()
        if string.utf8.contains(0) {
            throw .unsupportedURL(string, reason: "the URL contains a NUL byte")
        }
        guard let handle = curl_url() else {
            throw .unsupportedURL(string, reason: "libcurl could not allocate a URL parser (curl_url)")
        }
        defer { curl_url_cleanup(handle) }

        let setCode = curl_url_set(handle, CURLUPART_URL, string, 0)
        guard setCode == CURLUE_OK else {
            throw .unsupportedURL(string, reason: "not a valid URL (\(Self.describe(setCode)))")
        }
        let scheme = (Self.part(handle, CURLUPART_SCHEME) ?? "").lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw .unsupportedURL(
                string, reason: "only http and https are allowed, not \(scheme.isEmpty ? "no scheme" : scheme)")
        }
        guard let host = Self.part(handle, CURLUPART_HOST), !host.isEmpty else {
            throw .unsupportedURL(string, reason: "the URL has no host")
        }
        let port = Self.part(handle, CURLUPART_PORT, flags: UInt32(CURLU_DEFAULT_PORT)).flatMap { Int($0) }
        self.string = string
        self.scheme = scheme
        self.host = host
        self.port = port ?? (scheme == "https" ? 443 : 80)
    }

    /// One component of a parsed URL, copied into a Swift string and freed (`curl_url_get`, `curl_free`).
    private static func part(_ handle: OpaquePointer, _ what: CURLUPart, flags: UInt32 = 0) -> String? {
        var pointer: UnsafeMutablePointer<CChar>?
        guard curl_url_get(handle, what, &pointer, flags) == CURLUE_OK, let pointer else { return nil }
        defer { curl_free(pointer) }
        return String(cString: pointer)
    }

    /// The text of a URL-parser error (`curl_url_strerror`).
    private static func describe(_ code: CURLUcode) -> String {
        String(cString: curl_url_strerror(code))
    }
}
