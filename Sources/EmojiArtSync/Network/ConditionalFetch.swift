/// The outcome of a feed request that may be conditional: `304 Not Modified`, or a fresh feed
/// with the validators to send next time (empty when the server sent none).
enum FeedFetch: Sendable {
    /// The server says the feed is the one the validators describe.
    case notModified
    /// A new feed, decoded, its validators, the SHA-256 (hex) of the body it was decoded from (empty when the body
    /// was compared with the last one kept instead of hashed), and that body kept for the next decode
    /// (`FeedDifference`) when the caller asked for it and it went to a file.
    case changed(GalleryFeed, HTTPValidators, bodyDigest: String, kept: KeptFeedBody?)
    /// A body byte-identical to the one whose digest the caller gave (`unchangedDigest`), with its validators: not
    /// decoded again. A gallery that cannot answer `304` (no validators, a new `ETag` at every request) and a full
    /// pass (`SIGHUP`, which asks unconditionally) cost a download and a hash, not a decode of 36 MB of JSON.
    case sameBody(HTTPValidators)
}
