/// The outcome of a feed request that may be conditional: `304 Not Modified`, or a fresh feed
/// with the validators to send next time (empty when the server sent none).
enum FeedFetch: Sendable {
    /// The server says the feed is the one the validators describe.
    case notModified
    /// A new feed, decoded, and its validators.
    case changed(GalleryFeed, HTTPValidators)
}
