@testable import EmojiArtSync
import Foundation

#if canImport(Glibc)
import Glibc
import TestSupport
#endif

/// A bound `AF_UNIX` datagram socket that plays systemd's side of sd_notify for one test: each datagram the
/// agent sends is one message of `KEY=value` lines.
final class NotifySocket {
    let address: UnixSocketAddress
    private let descriptor: Int32

    /// Binds `address` (a path in a temporary directory, or `@name` in the abstract namespace).
    init(_ address: UnixSocketAddress) throws {
        self.address = address
        descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { throw TestFailure("socket: errno \(errno)") }
        let bound = address.withSocketAddress { bind(descriptor, $0, $1) }
        guard bound == 0 else {
            close(descriptor)
            throw TestFailure("bind \(address): errno \(errno)")
        }
    }

    deinit { close(descriptor) }

    /// The next datagram, waiting up to `timeout` for one; throws when none came.
    func next(timeout: Duration = .seconds(60)) async throws -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count >= 0 { return String(decoding: buffer[..<count], as: UTF8.self) }
            guard errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR else {
                throw TestFailure("recv: errno \(errno)")
            }
            guard ContinuousClock.now < deadline else { throw TestFailure("no notification within \(timeout)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Reads messages until one satisfies `matches` (within `timeout` in all); returns it and every message
    /// read before it.
    func next(
        timeout: Duration = .seconds(60), where matches: (String) -> Bool
    ) async throws -> (message: String, before: [String]) {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        var before: [String] = []
        while true {
            let message = try await next(timeout: ContinuousClock.now.duration(to: deadline))
            if matches(message) { return (message, before) }
            before.append(message)
            guard ContinuousClock.now < deadline else {
                throw TestFailure("no matching notification within \(timeout); got \(before)")
            }
        }
    }
}
