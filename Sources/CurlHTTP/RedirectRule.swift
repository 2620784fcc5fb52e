/// Which redirects the client follows: to the same host only (compared without case; any port), and
/// never from `https` down to `http`. An `http` to `https` upgrade on the same host is followed.
///
/// A redirect to another host is refused because the agent only ever talks to the origin it was
/// configured with: a feed or an image must not be able to send it elsewhere (`docs` of `--server` in
/// man/emojiart-sync.1). A downgrade is refused because it would hand a request meant for TLS to the
/// network in the clear.
enum RedirectRule {
    /// Why a redirect from `origin` to `target` is not followed, or nil when it is.
    static func refusal(from origin: CurlURL, to target: CurlURL) -> String? {
        if origin.host.lowercased() != target.host.lowercased() {
            return "it leads to another host (\(target.host))"
        }
        if origin.scheme == "https" && target.scheme == "http" {
            return "it would leave https for plain http"
        }
        return nil
    }
}
