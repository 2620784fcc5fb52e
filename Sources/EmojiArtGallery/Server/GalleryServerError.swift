/// Why a ``GalleryServer`` could not start, or why a response body ended early.
public struct GalleryServerError: Error, Sendable, CustomStringConvertible {
    /// The broad reason, for code that branches on it.
    public enum Kind: String, Sendable {
        /// The listening socket could not be bound (address in use, bad host, no permission).
        case bindFailed
        /// ``GalleryServer/start()`` was called while another start is under way, or after stop.
        case invalidState
        /// The server stopped before it was ready.
        case stoppedBeforeReady
        /// A response body was cut on purpose (the `truncated` fault), closing the connection.
        case truncatedOnPurpose
        /// A streaming body stopped because the server is stopping.
        case serverStopping
    }

    /// The broad reason.
    public var kind: Kind
    /// What went wrong, in words a user can act on.
    public var message: String
    /// The error underneath, e.g. what `bind(2)` said, as text.
    public var underlying: String?

    /// Creates an error.
    public init(kind: Kind, message: String, underlying: String? = nil) {
        self.kind = kind
        self.message = message
        self.underlying = underlying
    }

    /// One line: kind, message and the underlying error when there is one.
    public var description: String {
        "gallery server error (\(kind.rawValue)): \(message)" + (underlying.map { " (\($0))" } ?? "")
    }
}
