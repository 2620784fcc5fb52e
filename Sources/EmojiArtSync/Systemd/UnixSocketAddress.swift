#if canImport(Glibc)
import Glibc
#endif

/// An `AF_UNIX` socket address as systemd spells it in `$NOTIFY_SOCKET`: a file system path, or, when it
/// starts with `@`, a name in the abstract namespace (the `@` stands for the leading NUL byte).
///
/// Owns the `sockaddr_un` encoding, so the notifier that sends to such a socket and the tests that bind one
/// agree on the bytes.
struct UnixSocketAddress: Sendable, Equatable, CustomStringConvertible {
    /// The address as written in `$NOTIFY_SOCKET`.
    let description: String

    /// Nil when `text` is empty or too long for `sun_path` (108 bytes on Linux, NUL included for paths).
    init?(_ text: String) {
        let limit = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        let length = text.utf8.count
        guard length > 0, text.hasPrefix("@") ? length <= limit : length < limit else { return nil }
        guard !text.utf8.contains(0) else { return nil }
        description = text
    }

    /// Whether the address lives in the abstract namespace (no file behind it).
    var isAbstract: Bool { description.hasPrefix("@") }

    /// Calls `body` with the encoded address and its length, as `bind(2)`, `connect(2)` and `sendto(2)` take it.
    func withSocketAddress<Result>(
        _ body: (UnsafePointer<sockaddr>, socklen_t) throws -> Result
    ) rethrows -> Result {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(description.utf8)
        if isAbstract { bytes[0] = 0 }  // abstract: a leading NUL, and the length counts only the name's bytes
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            path.copyBytes(from: bytes)
        }
        let length = socklen_t(pathOffset + bytes.count + (isAbstract ? 0 : 1))
        return try withUnsafePointer(to: &address) { pointer in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { try body($0, length) }
        }
    }
}
