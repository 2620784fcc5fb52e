import Foundation

/// Polls `condition` every 10 ms for up to 10 s; fails the test if it never holds.
func waitFor(_ condition: () -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(10)
    while !condition() {
        guard clock.now < deadline else { throw TestFailure("condition not met within 10 s") }
        try await Task.sleep(for: .milliseconds(10))
    }
}
