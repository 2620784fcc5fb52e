import CurlHTTP

extension CurlHTTPClient {
    /// Fetches every URL at once, a task each, and returns the bodies by the URL's index: how the tests put many
    /// transfers in flight together.
    func fetchAll(_ urls: [String]) async throws -> [Int: [UInt8]] {
        try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
            for (index, url) in urls.enumerated() {
                group.addTask { (index, try await self.fetch(url)) }
            }
            var bodies: [Int: [UInt8]] = [:]
            for try await (index, body) in group { bodies[index] = body }
            return bodies
        }
    }
}
