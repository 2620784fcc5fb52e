/// An error a test helper throws to fail the one test that called it (never `precondition`, which would take
/// the whole test run down).
struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
