/// What `GET /_control/stats` answers: request counts and the fault plan in force.
///
/// Counts cover the gallery's own endpoints (feed, images, unknown paths), not `/_control/*`,
/// so a script that polls the stats does not disturb them.
public struct GalleryStats: Codable, Sendable, Equatable {
    /// All counted requests since start or the last reset.
    public var total: Int
    /// Requests to `/gallery/image` with any query (``GalleryServer/imageRequestCount``).
    public var imageRequests: Int
    /// Requests per exact path and query, e.g. `"/gallery/image?3": 2`.
    public var paths: [String: Int]
    /// Responses currently streaming a never-ending or slow body (`endless`, `slow` faults).
    public var activeStreams: Int
    /// The fault plan in force.
    public var faults: GalleryFaults

    /// Creates stats from their parts.
    public init(total: Int, imageRequests: Int, paths: [String: Int], activeStreams: Int, faults: GalleryFaults) {
        self.total = total
        self.imageRequests = imageRequests
        self.paths = paths
        self.activeStreams = activeStreams
        self.faults = faults
    }
}
