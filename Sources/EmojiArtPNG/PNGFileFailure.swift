#if canImport(Glibc)
import Glibc
#endif

/// Why a PNG in a file was not accepted (`PNGValidator.validate(file:size:level:limits:observing:)`): a defect in
/// its bytes, exactly as the same bytes in memory would have, or a read of the file that failed, which says
/// nothing of the bytes.
public enum PNGFileFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes are not an acceptable PNG.
    case defect(PNGDefect)
    /// Reading the file failed: the system call and its errno (`EIO`, say).
    case unreadable(call: String, errno: Int32)

    /// The defect's message, or the failed call: `pread failed: Input/output error (errno 5)`.
    public var description: String {
        switch self {
        case .defect(let defect):
            defect.description
        case .unreadable(let call, let errno):
            "\(call) failed: \(String(cString: strerror(errno))) (errno \(errno))"
        }
    }
}
