import Synchronization

/// A value a test shares with closures that run on other threads (a test server's handler, a hook, a logger, a
/// detached task): Synchronization's `Mutex` in a class, because an escaping closure can hold neither a `Mutex`
/// nor an `Atomic` itself. The tests' one such box (a counter, a flag, the last record seen).
public final class Shared<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>

    public init(_ value: Value) {
        storage = Mutex(value)
    }

    public var value: Value { storage.withLock { $0 } }

    public func set(_ value: Value) {
        storage.withLock { $0 = value }
    }
}

extension Shared where Value == Int {
    /// Adds one; returns the new value.
    @discardableResult
    public func increment() -> Int {
        storage.withLock { count in
            count += 1
            return count
        }
    }
}

extension Shared {
    /// Appends `element` to the array, under the lock.
    public func append<Element: Sendable>(_ element: Element) where Value == [Element] {
        storage.withLock { $0.append(element) }
    }
}
