/// The gallery's fault plan: how it misbehaves right now. Mutable at runtime through
/// ``GalleryServer/setFaults(_:)`` or `POST /_control/faults`.
///
/// Every field defaults to "behave": ``none`` is the book's server, quirks included. In JSON every
/// key is optional (a missing key takes its default), so a script can post just
/// `{"allImages": "corrupt"}`; `imageFaults` is an object keyed by N as a string, e.g.
/// `{"imageFaults": {"3": "truncated", "5": "slow:500"}}`.
public struct GalleryFaults: Sendable, Equatable, Hashable {
    /// Delay before every gallery response (feed, images, 404s; not the control endpoints).
    public var latencyMilliseconds: Int
    /// When true the feed is `[]`.
    public var emptyFeed: Bool
    /// When set, the feed answers with this status (e.g. 500) and a JSON error body instead of items.
    public var feedStatus: Int?
    /// When set, the feed is throttled as ``Throttle`` says (once per plan), then served.
    public var feedThrottle: Throttle?
    /// Per-image faults, by N. An entry wins over ``allImages``.
    public var imageFaults: [Int: ImageFault]
    /// The fault for every image N without an entry in ``imageFaults``.
    public var allImages: ImageFault?
    /// Image content generation. Bump it and every image's bytes change (the feed's checksums do
    /// not: they are opaque tags, as in the book). 0 is the pristine set.
    public var generation: Int
    /// Extra feed items with these `url`s, appended once each after the shuffled listing: how tests serve a
    /// hostile feed (absolute URLs, other hosts, `..`) to a client that must refuse them.
    public var extraFeedURLs: [String]
    /// Items left out of the feed (their images are still served): how tests make an item
    /// disappear from the gallery.
    public var droppedItems: [Int]
    /// When true the feed lists its items in one order at every request (byte-identical until the plan or the
    /// items change), as a static export's file does, instead of shuffling them afresh.
    public var unshuffledFeed: Bool

    /// The book's behaviour: no faults.
    public static let none = GalleryFaults()

    /// Creates a plan; every parameter defaults to "no fault".
    public init(
        latencyMilliseconds: Int = 0,
        emptyFeed: Bool = false,
        feedStatus: Int? = nil,
        imageFaults: [Int: ImageFault] = [:],
        allImages: ImageFault? = nil,
        generation: Int = 0,
        extraFeedURLs: [String] = [],
        droppedItems: [Int] = [],
        feedThrottle: Throttle? = nil,
        unshuffledFeed: Bool = false
    ) {
        self.feedThrottle = feedThrottle
        self.latencyMilliseconds = latencyMilliseconds
        self.emptyFeed = emptyFeed
        self.feedStatus = feedStatus
        self.imageFaults = imageFaults
        self.allImages = allImages
        self.generation = generation
        self.extraFeedURLs = extraFeedURLs
        self.droppedItems = droppedItems
        self.unshuffledFeed = unshuffledFeed
    }

    /// The fault that applies to image N: its own entry, else ``allImages``, else nil.
    public func fault(forImage n: Int) -> ImageFault? {
        imageFaults[n] ?? allImages
    }
}

extension GalleryFaults: Codable {
    private enum CodingKeys: String, CodingKey {
        case latencyMilliseconds, emptyFeed, feedStatus, imageFaults, allImages, generation, extraFeedURLs, droppedItems
        case feedThrottle, unshuffledFeed
    }

    /// Decodes a plan in which every key is optional and takes its "no fault" default.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            latencyMilliseconds: try container.decodeIfPresent(Int.self, forKey: .latencyMilliseconds) ?? 0,
            emptyFeed: try container.decodeIfPresent(Bool.self, forKey: .emptyFeed) ?? false,
            feedStatus: try container.decodeIfPresent(Int.self, forKey: .feedStatus),
            imageFaults: try container.decodeIfPresent([Int: ImageFault].self, forKey: .imageFaults) ?? [:],
            allImages: try container.decodeIfPresent(ImageFault.self, forKey: .allImages),
            generation: try container.decodeIfPresent(Int.self, forKey: .generation) ?? 0,
            extraFeedURLs: try container.decodeIfPresent([String].self, forKey: .extraFeedURLs) ?? [],
            droppedItems: try container.decodeIfPresent([Int].self, forKey: .droppedItems) ?? [],
            feedThrottle: try container.decodeIfPresent(Throttle.self, forKey: .feedThrottle),
            unshuffledFeed: try container.decodeIfPresent(Bool.self, forKey: .unshuffledFeed) ?? false
        )
        if let status = feedStatus, !(100...599).contains(status) {
            throw DecodingError.dataCorruptedError(
                forKey: .feedStatus, in: container, debugDescription: "feedStatus \(status) is not an HTTP status (100...599)")
        }
        if latencyMilliseconds < 0 {
            throw DecodingError.dataCorruptedError(
                forKey: .latencyMilliseconds, in: container, debugDescription: "latencyMilliseconds must not be negative")
        }
    }

    /// Encodes every key, `null` for an unset optional, so a reader sees the whole plan.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(latencyMilliseconds, forKey: .latencyMilliseconds)
        try container.encode(emptyFeed, forKey: .emptyFeed)
        try container.encode(feedStatus, forKey: .feedStatus)
        try container.encode(imageFaults, forKey: .imageFaults)
        try container.encode(allImages, forKey: .allImages)
        try container.encode(generation, forKey: .generation)
        try container.encode(extraFeedURLs, forKey: .extraFeedURLs)
        try container.encode(droppedItems, forKey: .droppedItems)
        try container.encode(feedThrottle, forKey: .feedThrottle)
        try container.encode(unshuffledFeed, forKey: .unshuffledFeed)
    }
}
