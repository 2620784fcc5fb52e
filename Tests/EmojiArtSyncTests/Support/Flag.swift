import Synchronization

/// A flag a test flips while a server's handler (on another thread) reads it.
final class Flag: Sendable {
    private let value: Atomic<Bool>
    init(_ initial: Bool) { value = Atomic(initial) }
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set(_ newValue: Bool) { value.store(newValue, ordering: .releasing) }
}
