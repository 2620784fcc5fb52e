import TestSupport
import Foundation
import FoundationNetworking

/// A complete HTTP response as Foundation's URLSession saw it: the tests' independent client
/// (not the project's own libcurl client, which is what the gallery is there to test).
struct Fetched: Sendable {
    var status: Int
    /// Header values by lower-cased name.
    var headers: [String: String]
    var body: [UInt8]
    /// Wall time from request to complete body.
    var duration: Duration

    var text: String { String(decoding: body, as: UTF8.self) }
}

/// Fetches `path` (e.g. `/gallery/image?3`) from `baseURL` with an ephemeral URLSession (no shared
/// connection pool between tests), optionally with a method and body.
func fetch(_ baseURL: String, _ path: String, method: String = "GET", body: [UInt8]? = nil) async throws -> Fetched {
    let url = try requireURL(baseURL + path)
    var request = URLRequest(url: url)
    request.httpMethod = method
    request.timeoutInterval = 30
    if let body {
        request.httpBody = Data(body)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
    }
    let session = URLSession(configuration: .ephemeral)
    defer { session.finishTasksAndInvalidate() }
    let clock = ContinuousClock()
    let start = clock.now
    let (data, response) = try await session.data(for: request)
    let duration = clock.now - start
    guard let http = response as? HTTPURLResponse else {
        throw TestFailure("not an HTTP response for \(path)")
    }
    var headers: [String: String] = [:]
    for (name, value) in http.allHeaderFields {
        if let name = name as? String, let value = value as? String {
            headers[name.lowercased()] = value
        }
    }
    return Fetched(status: http.statusCode, headers: headers, body: Array(data), duration: duration)
}

/// A URL from a string, or a test failure naming it.
private func requireURL(_ text: String) throws -> URL {
    guard let url = URL(string: text) else { throw TestFailure("bad URL \(text)") }
    return url
}
