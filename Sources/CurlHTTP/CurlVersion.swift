import CCurl

/// The libcurl this process runs with, as `curl --version` names it.
public enum CurlVersion {
    /// libcurl's own summary of itself and the libraries it uses: `libcurl/8.14.1 OpenSSL/3.5.1 zlib/1.3.1 ...`.
    /// The corresponding C function is `curl_version`, which needs no `curl_global_init`.
    public static var summary: String { String(cString: curl_version()) }
}
