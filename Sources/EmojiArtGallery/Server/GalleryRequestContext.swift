import Hummingbird
import NIOCore

/// The per-request context the gallery's responder gets: Hummingbird's core context plus the
/// connection's NIO `Channel`.
///
/// The channel is what lets streaming fault bodies pace themselves: see
/// ``waitForQueuedWrites()``. Hummingbird's `BasicRequestContext` does not keep it.
struct GalleryRequestContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    /// The connection this request arrived on.
    let channel: any Channel

    init(source: ApplicationRequestContextSource) {
        self.coreContext = CoreRequestContextStorage(source: source)
        self.channel = source.channel
    }

    /// Returns once the connection's event loop has run every task queued before this call,
    /// which includes the writes of every body part written so far.
    ///
    /// Why: Hummingbird hands body parts to NIO through an async writer that hops to the event
    /// loop. A producer that writes in a tight loop can queue many parts before the loop has run
    /// one and noticed the socket is full, so back-pressure (the next write suspending while the
    /// channel is not writable) kicks in late, by however far the producer got ahead. Waiting here
    /// after each part bounds that to one part: afterwards the channel's writability is current.
    func waitForQueuedWrites() async throws {
        try await channel.eventLoop.submit {}.get()
    }
}
