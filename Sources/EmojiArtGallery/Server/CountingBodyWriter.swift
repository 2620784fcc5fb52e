import Hummingbird
import HTTPTypes
import NIOCore
import Synchronization

/// A running byte total shared between a response body and the code that logs it afterwards.
final class ByteTally: Sendable {
    private let total = Atomic<Int>(0)

    init() {}

    /// Adds `count` bytes.
    func add(_ count: Int) {
        total.add(count, ordering: .relaxed)
    }

    /// Bytes added so far.
    var value: Int {
        total.load(ordering: .relaxed)
    }
}

/// A `ResponseBodyWriter` that passes every buffer on and adds its size to a ``ByteTally``, so
/// the request log can say how many body bytes were really written (half, for `truncated`).
struct CountingBodyWriter: ResponseBodyWriter {
    var base: any ResponseBodyWriter
    let tally: ByteTally

    mutating func write(_ buffer: ByteBuffer) async throws {
        try await base.write(buffer)
        tally.add(buffer.readableBytes)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {
        try await base.finish(trailingHeaders)
    }
}
