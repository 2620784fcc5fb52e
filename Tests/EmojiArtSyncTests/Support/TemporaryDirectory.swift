import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A fresh directory under /tmp for one test, removed when the test is done with it.
///
/// If none can be made (a full /tmp), the failure is recorded against the test that asked, and the path is one
/// that does not exist, so that test fails on its own; the rest of the run goes on.
final class TemporaryDirectory {
    let path: String

    init(_ label: String = "test") {
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

    func file(_ name: String) -> String { path + "/" + name }

    /// Sorted names in `sub` (relative), hidden files included.
    func names(in sub: String = "") -> [String] {
        let dir = sub.isEmpty ? path : path + "/" + sub
        return ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }
}

/// Reads a whole file, or nil.
func readBytes(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { Array($0) }
}

/// Writes bytes to a path, replacing what is there.
func writeBytes(_ bytes: [UInt8], to path: String) throws {
    try Data(bytes).write(to: URL(fileURLWithPath: path))
}

/// A thread-safe counter for tests that count calls from concurrent tasks.
final class Counter: Sendable {
    private let storage = Atomic<Int>(0)
    @discardableResult
    func increment() -> Int { storage.add(1, ordering: .relaxed).newValue }
    var value: Int { storage.load(ordering: .relaxed) }
}
