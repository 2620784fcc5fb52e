/// Why the server could not start, or why a response ended early.
public struct HTTPServerError: Error, Sendable, CustomStringConvertible {
    /// The broad reason.
    public enum Kind: String, Sendable {
        /// `getaddrinfo`, `socket`, `bind` or `listen` failed.
        case cannotListen
        /// A write to the connection failed: the client went away, or the server is stopping.
        case connectionClosed
        /// `start()` after `stop()`, or twice.
        case invalidState
    }

    /// The broad reason.
    public var kind: Kind
    /// What happened, with the system's words for it.
    public var message: String

    /// Creates an error.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
