#if canImport(Glibc)
import Glibc
#endif

/// The package's one way to make a system call that reports failure as -1 and `errno` (the shape of swift-nio's
/// `syscall` wrapper): the call is made again while it fails with `EINTR` (a signal handler ran; nothing
/// happened), and any other failure leaves with its `errno`, read right after the call and before any other
/// code can change it. ``systemCall(_:path:hint:_:)`` adds the call's name and path for the log.
///
/// Modules below `EmojiArtSync` (CurlHTTP, EmbeddedHTTP, POSIXThreads) cannot import this and keep their
/// own loops.
package struct SystemCallFailure: Error, Equatable, Sendable {
    /// The failed call's `errno`, never `EINTR`.
    package let errno: Int32
}

/// `body` (a system call returning -1 with `errno` set on failure), called again while it fails with `EINTR`.
/// Returns its result, or throws the `errno` of its failure.
@inline(never)  // nothing between the call and the read of errno
package func retryingInterrupts<Result: SignedInteger>(_ body: () -> Result) throws(SystemCallFailure) -> Result {
    while true {
        let result = body()
        guard result == -1 else { return result }
        let code = errno
        if code != EINTR { throw SystemCallFailure(errno: code) }
    }
}

/// ``retryingInterrupts(_:)`` whose failure is a ``SyncError`` naming `call`, the errno and `path`:
/// `hint: path: strerror (call, errno N)`.
package func systemCall<Result: SignedInteger>(
    _ call: String, path: String?, hint: String, _ body: () -> Result
) throws(SyncError) -> Result {
    do {
        return try retryingInterrupts(body)
    } catch {
        throw SyncError.system(call, path: path, errno: error.errno, hint: hint)
    }
}

/// Writes all of `buffer` to `descriptor` with `write(2)`, again after a short write or `EINTR`. Throws the
/// first other failure (`ENOSPC`, `EIO`...); what was written before it stays written.
package func writeFully(_ descriptor: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallFailure) {
    var offset = 0
    while offset < buffer.count {
        offset += try retryingInterrupts { write(descriptor, buffer.baseAddress! + offset, buffer.count - offset) }
    }
}
