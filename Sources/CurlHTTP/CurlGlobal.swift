import CCurl

/// libcurl's process-wide set-up (`curl_global_init`), done exactly once per process.
///
/// libcurl must be initialised before any other call, and `curl_global_init` is not safe to
/// call concurrently on every build (only since 7.84 with atomics). A Swift global `let` is
/// initialised once, on first use, under the runtime's own lock, which is exactly the
/// guarantee needed. libcurl is never de-initialised: `curl_global_cleanup` would race with
/// other clients in the same process and frees nothing the exit would not.
enum CurlGlobal {
    /// The result of the single `curl_global_init(CURL_GLOBAL_ALL)` call.
    private static let initResult: CURLcode = curl_global_init(Int(CURL_GLOBAL_ALL))

    /// Runs `curl_global_init` if no one has yet, and reports whether it succeeded.
    static func ensureInitialized() throws(HTTPClientError) {
        let code = initResult
        guard code == CURLE_OK else {
            throw HTTPClientError(
                kind: .transport, url: "", message: "libcurl could not be initialised",
                call: "curl_global_init", curlCode: Int(code.rawValue),
                curlMessage: String(cString: curl_easy_strerror(code)))
        }
    }
}
