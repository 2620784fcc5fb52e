/// Polls `condition` every 10 ms until it holds or `timeout` passes; returns whether it held.
///
/// The condition is checked once more at the deadline, so a slow machine that gets there late still sees the
/// last state. Sync and async, throwing and non-throwing conditions all fit; the call throws only if the
/// condition does. The default timeout is generous because tests sync on it, never measure with it: a test
/// that needs a shorter wait (it goes on either way) passes its own.
public func eventually(
    timeout: Duration = .seconds(30), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now.advanced(by: timeout)
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}
