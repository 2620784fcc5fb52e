import Foundation
import Glibc
import TestSupport

/// What a raw HTTP/1.1 read saw: the parsed head and the body bytes exactly as they came off the
/// socket (chunk framing included for chunked bodies).
struct RawResponse: Sendable {
    var status: Int
    /// Header values by lower-cased name.
    var headers: [String: String]
    var body: [UInt8]
    /// Whether the server closed the connection (read returned 0 or the connection was reset)
    /// before the client stopped reading.
    var serverClosed: Bool
}

/// A minimal HTTP/1.1 client on the tests' raw client (`RawClient`), for the faults URLSession hides: a body shorter
/// than its Content-Length, and a body that never ends.
///
/// The blocking socket calls run on a thread of their own, never on Swift's cooperative pool,
/// whose few threads the in-process server needs to answer.
enum RawHTTP {
    /// How a slow client reads: a small fixed receive buffer (`SO_RCVBUF`, which also stops the
    /// kernel from growing it) and a pause after every read.
    struct SlowReader: Sendable {
        var receiveBufferBytes: Int32
        var pauseMilliseconds: Int
    }

    /// Sends `GET path` (plus `headers`) to 127.0.0.1:port and reads the response until the server
    /// closes the connection or `bodyLimit` body bytes have arrived; then hangs up.
    static func get(
        _ baseURL: String, _ path: String, headers: [(String, String)] = [], bodyLimit: Int = .max,
        slowReader: SlowReader? = nil, timeoutSeconds: Int = 20
    ) async throws -> RawResponse {
        guard let port = URL(string: baseURL)?.port else { throw TestFailure("no port in \(baseURL)") }
        let extra = headers.map { "\($0.0): \($0.1)\r\n" }.joined()
        return try await onOwnThread {
            try exchange(
                port: port, path: path, extraHeaders: extra, bodyLimit: bodyLimit, slowReader: slowReader,
                timeoutSeconds: timeoutSeconds)
        }
    }

    private static func exchange(
        port: Int, path: String, extraHeaders: String, bodyLimit: Int, slowReader: SlowReader?, timeoutSeconds: Int
    ) throws -> RawResponse {
        let client = try RawClient(
            port: port, receiveTimeout: timeoutSeconds, receiveBufferBytes: slowReader?.receiveBufferBytes)
        try client.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\(extraHeaders)\r\n")

        var received: [UInt8] = []
        var headEnd: Int?
        var serverClosed = false
        while true {
            if let headEnd, received.count - headEnd >= bodyLimit { break }
            let chunk: [UInt8]
            do {
                chunk = try client.receive()
            } catch {
                throw TestFailure("\(error) after \(received.count) bytes")
            }
            if chunk.isEmpty {
                serverClosed = true
                break
            }
            received.append(contentsOf: chunk)
            if let slowReader {
                usleep(useconds_t(slowReader.pauseMilliseconds * 1000))
            }
            if headEnd == nil, let end = headerEnd(in: received) {
                headEnd = end
            }
        }
        guard let headEnd else { throw TestFailure("no complete response head in \(received.count) bytes") }
        let head = String(decoding: received[0..<headEnd], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n").filter { !$0.isEmpty }
        guard let statusLine = lines.first, statusLine.split(separator: " ").count >= 2,
              let status = Int(statusLine.split(separator: " ")[1]) else {
            throw TestFailure("bad status line in \(head)")
        }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let body = Array(received[headEnd...].prefix(bodyLimit))
        return RawResponse(status: status, headers: headers, body: body, serverClosed: serverClosed)
    }

    /// The index just past the blank line ending the head, if it has arrived.
    private static func headerEnd(in bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index + 4
        }
        return nil
    }
}
