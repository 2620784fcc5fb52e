/// An error a test helper throws to fail the one test that called it (never `precondition`, which would take
/// the whole test run down).
public struct TestFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
