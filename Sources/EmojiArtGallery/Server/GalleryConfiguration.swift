/// How a ``GalleryServer`` listens and what it serves.
///
/// A plain value: build one, hand it to ``GalleryServer/init(configuration:)``. Only the faults
/// can change while the server runs (``GalleryServer/setFaults(_:)``); everything else is fixed
/// for the server's lifetime.
public struct GalleryConfiguration: Sendable {
    /// Address to bind. Loopback by default, so a test or demo never exposes a port to the network.
    public var host: String
    /// TCP port; `0` asks the kernel for any free port (tests use this, then read the bound port
    /// from ``GalleryServer/start()``). `8080` by default, the book server's port.
    public var port: Int
    /// Number of unique items, N = 1...count. 29 by default, as in the book's server.
    public var count: Int
    /// The fault plan in force when the server starts.
    public var faults: GalleryFaults
    /// Full-size pictures (the default, as the book's server) or 16x16 ones for very large galleries.
    public var imageSize: GalleryImageSize
    /// Called once per request when its response is finished (or abandoned), off the request's
    /// critical path. The executable uses it to print one logfmt line per request to stderr.
    /// `nil` (the default) logs nothing: the library never writes to stdout or stderr on its own.
    public var requestLogger: (@Sendable (GalleryRequestRecord) -> Void)?

    /// Creates a configuration; every parameter has the default described on its property.
    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        count: Int = 29,
        faults: GalleryFaults = .none,
        imageSize: GalleryImageSize = .full,
        requestLogger: (@Sendable (GalleryRequestRecord) -> Void)? = nil
    ) {
        self.host = host
        self.port = port
        self.count = count
        self.faults = faults
        self.imageSize = imageSize
        self.requestLogger = requestLogger
    }
}
