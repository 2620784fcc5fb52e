extension GalleryFeed {
    /// The largest feed body accepted, in bytes: 64 MiB. Separate from `--max-body-size`, which
    /// bounds images: the bundled gallery's feed of 100,000 items (each listed three times) is
    /// 35 MB, while an image is about 50 KB. A larger feed is refused before it is decoded
    /// (`SyncError.Code.feed`), so a hostile server cannot make the agent hold 100 MB of JSON.
    static let maximumBodySize = 64 * 1024 * 1024
}
