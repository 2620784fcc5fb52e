/// One open connection as it travels between the server's event loop (while it waits for a request) and a
/// handler thread (while it is answered): its socket and the bytes read past the last request.
struct ServerConnection: Sendable {
    let id: Int
    let socket: ConnectedSocket
    var reader: HTTPRequestReader
}

/// A request (or a refusal) taken off a connection, waiting for a handler thread.
struct ServerJob: Sendable {
    var connection: ServerConnection
    /// `.request` or `.refuse`; never `.incomplete`.
    var work: HTTPRequestReader.Outcome
}
