import CCurl

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension CurlTransfer {
    /// Turns libcurl's verdict on a finished transfer into a response or an error a person can read.
    ///
    /// Call after the transfer left the multi handle and before it is destroyed: the
    /// `curl_easy_getinfo` values it reads live in the easy handle.
    func outcome(_ code: CURLcode) -> Result<HTTPResponse, HTTPClientError> {
        let url = request.url.string
        if code == CURLE_OK {
            let status = longInfo(CURLINFO_RESPONSE_CODE)
            let redirect = (300...399).contains(status) ? stringInfo(CURLINFO_REDIRECT_URL) : nil
            return .success(HTTPResponse(url: url, status: status, headers: headers, body: body, redirectURL: redirect))
        }
        let osErrno = Int32(truncatingIfNeeded: longInfo(CURLINFO_OS_ERRNO))
        let (kind, message) = classify(code, osErrno: osErrno)
        return .failure(
            HTTPClientError(
                kind: kind, url: url, message: message,
                call: "curl_multi_perform", curlCode: Int(code.rawValue),
                curlMessage: String(cString: curl_easy_strerror(code)),
                detail: errorDetail, systemErrno: osErrno == 0 ? nil : osErrno))
    }

    /// The kind and log message for a failed transfer.
    private func classify(_ code: CURLcode, osErrno: Int32) -> (HTTPClientError.Kind, String) {
        if let proxy, let failure = proxyFailure(code, osErrno: osErrno, proxy: proxy) { return failure }
        let url = request.url.string
        let authority = request.url.authority
        switch code {
        case CURLE_COULDNT_CONNECT where osErrno == ECONNREFUSED:
            return (.refused, "connection refused by \(authority) (is the gallery running?)")
        case CURLE_COULDNT_CONNECT:
            return (.transport, "could not connect to \(authority) for \(url)")
        case CURLE_OPERATION_TIMEDOUT where isStuckInTLSHandshake:
            return (
                .tls,
                "no TLS answer from \(authority) within \(configuration.connectTimeout.humanReadable) for \(url): "
                    + "the connection opened but the handshake never completed \(Self.plainHTTPHint)"
            )
        case CURLE_OPERATION_TIMEDOUT:
            return (.timedOut, timeoutMessage())
        case CURLE_COULDNT_RESOLVE_HOST:
            return (.resolveFailed, "could not resolve host \(request.url.host) for \(url) (is the name right?)")
        case CURLE_WRITE_ERROR where sinkFailed:
            return (.transport, "could not store the body of \(url): \(request.bodySink?.failureDescription ?? "")")
        case CURLE_WRITE_ERROR where exceededBodyLimit:
            return (.tooLarge(limit: maxBodySize), "body larger than \(HTTPClientError.byteCount(maxBodySize)) limit: \(url)")
        case CURLE_FILESIZE_EXCEEDED:
            // libcurl stops at the Content-Length header, before CURLINFO_CONTENT_LENGTH_DOWNLOAD_T is set.
            let declared = (declaredContentLength.map(String.init) ?? headers["content-length"])
                .map { " (server declared \($0) bytes)" } ?? ""
            return (
                .tooLarge(limit: maxBodySize),
                "body larger than \(HTTPClientError.byteCount(maxBodySize)) limit: \(url)\(declared)"
            )
        case CURLE_PARTIAL_FILE:
            let received = max(0, offsetInfo(CURLINFO_SIZE_DOWNLOAD_T))
            let declared = declaredContentLength.map(String.init) ?? "?"
            return (.truncated, "transfer ended early: got \(received) of \(declared) bytes from \(url)")
        case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT:
            return (.unsupportedURL, "refusing \(url): libcurl does not accept this URL")
        case CURLE_PEER_FAILED_VERIFICATION:
            return (
                .tls,
                "TLS certificate verification failed for \(authority) (\(url)): the server's certificate is not "
                    + "trusted (signed by a private CA? trust it with --ca-cert FILE)"
            )
        case CURLE_SSL_CACERT_BADFILE:
            let file = configuration.caCertificateFile.map { " \($0)" } ?? ""
            return (.tls, "cannot use the CA certificate file\(file) for \(url) (is it a readable PEM file?)")
        case CURLE_SSL_CONNECT_ERROR where errorDetail?.contains("wrong version number") == true:
            // OpenSSL's verdict when the first bytes back are not a TLS record: a plain HTTP answer, usually.
            return (.tls, "TLS with \(authority) failed for \(url): the server answered without TLS \(Self.plainHTTPHint)")
        case CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH,
            CURLE_SSL_INVALIDCERTSTATUS, CURLE_SSL_CRL_BADFILE, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED, CURLE_USE_SSL_FAILED:
            return (.tls, "TLS with \(authority) failed for \(url) (certificate or handshake problem)")
        case CURLE_GOT_NOTHING:
            return (.transport, "\(authority) closed the connection without answering \(url)")
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR:
            return (.transport, "connection to \(authority) broke during \(url)")
        case CURLE_WEIRD_SERVER_REPLY:
            return (.transport, "\(authority) did not answer \(url) with valid HTTP")
        default:
            return (.transport, "transfer of \(url) failed: \(String(cString: curl_easy_strerror(code)))")
        }
    }

    /// The hint for an `https://` URL whose server did not speak TLS.
    static let plainHTTPHint = "(is the server speaking plain HTTP on this port? then use http://)"

    /// An `https` transfer whose TCP connection came up (libcurl knows the peer's address,
    /// `CURLINFO_PRIMARY_IP`; its `CURLINFO_CONNECT_TIME_T` stays 0 until TLS is up too) but whose TLS
    /// handshake never finished (`CURLINFO_APPCONNECT_TIME_T` still 0): the peer accepted the connection and
    /// never answered the client's hello, as a plain-HTTP server waiting for a request line does.
    private var isStuckInTLSHandshake: Bool {
        request.url.scheme == "https" && proxy == nil && isConnected && offsetInfo(CURLINFO_APPCONNECT_TIME_T) == 0
    }

    /// Whether a TCP connection (to the server or the proxy) was made: libcurl records the peer's address
    /// (`CURLINFO_PRIMARY_IP`) once it is.
    private var isConnected: Bool {
        !(stringInfo(CURLINFO_PRIMARY_IP) ?? "").isEmpty
    }

    /// The kind and message when the failure is the proxy's: it refused, could not be reached or resolved,
    /// timed out before it connected us, or would not open a tunnel. Nil when the proxy did its part.
    private func proxyFailure(_ code: CURLcode, osErrno: Int32, proxy: HTTPProxy) -> (HTTPClientError.Kind, String)? {
        let url = request.url.string
        let named = "proxy \(proxy.authority) (from \(proxy.variable))"
        let bypass = "no_proxy=\(request.url.host) bypasses it"
        let tunnelStatus = longInfo(CURLINFO_HTTP_CONNECTCODE)
        switch code {
        case CURLE_COULDNT_CONNECT where osErrno == ECONNREFUSED:
            return (.refused, "connection refused by \(named) for \(url) (is the proxy running? \(bypass))")
        case CURLE_COULDNT_CONNECT:
            return (.transport, "could not connect to \(named) for \(url)")
        case CURLE_COULDNT_RESOLVE_PROXY:
            return (.resolveFailed, "could not resolve the host of \(named) for \(url) (is the name right?)")
        case CURLE_OPERATION_TIMEDOUT where !isConnected:
            return (.timedOut, "timed out after \(configuration.connectTimeout.humanReadable) connecting to \(named) for \(url)")
        case _ where tunnelStatus >= 300:
            return (
                .transport,
                "\(named) refused to open a tunnel to \(request.url.authority) for \(url): HTTP \(tunnelStatus) (\(bypass))"
            )
        default:
            return nil
        }
    }

    /// Says which timeout fired: connect (nothing was sent yet), total, or low speed.
    private func timeoutMessage() -> String {
        let url = request.url.string
        let elapsed = Duration.microseconds(max(0, offsetInfo(CURLINFO_TOTAL_TIME_T)))
        // No request bytes sent means the connection (TCP or TLS) never came up.
        if longInfo(CURLINFO_REQUEST_SIZE) == 0 {
            return "timed out after \(configuration.connectTimeout.humanReadable) connecting to \(request.url.authority) for \(url)"
        }
        if elapsed + .milliseconds(50) >= configuration.totalTimeout {
            return "timed out after \(elapsed.humanReadable) receiving \(url) (limit for the whole request)"
        }
        return "timed out after \(elapsed.humanReadable) receiving \(url) "
            + "(slower than \(configuration.lowSpeedLimitBytesPerSecond) bytes/s for \(configuration.lowSpeedTime.humanReadable))"
    }
}
