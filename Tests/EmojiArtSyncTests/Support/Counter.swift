import Synchronization

/// A thread-safe counter for tests that count calls from concurrent tasks.
final class Counter: Sendable {
    private let storage = Atomic<Int>(0)
    @discardableResult
    func increment() -> Int { storage.add(1, ordering: .relaxed).newValue }
    var value: Int { storage.load(ordering: .relaxed) }
}
