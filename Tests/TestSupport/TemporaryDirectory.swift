import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp for one test, removed when the test is done with it.
///
/// If none can be made (a full /tmp), the failure is recorded against the test that asked, and the path is one
/// that does not exist, so that test fails on its own; the rest of the run goes on.
public final class TemporaryDirectory {
    /// The directory's absolute path.
    public let path: String

    /// Makes `/tmp/emojiart-<label>-XXXXXX`.
    public init(_ label: String = "test") {
        var template = Array("/tmp/emojiart-\(label)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!) }
        if let made {
            path = String(cString: made)
        } else {
            Issue.record("cannot make a temporary directory for \(label): mkdtemp failed, errno \(errno)")
            path = "/nonexistent/emojiart-\(label)"
        }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The path of `name` inside the directory.
    public func file(_ name: String) -> String { path + "/" + name }

    /// Sorted names in `sub` (relative), hidden files included.
    public func names(in sub: String = "") -> [String] {
        let dir = sub.isEmpty ? path : path + "/" + sub
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }
}
