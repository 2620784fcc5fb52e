import CurlHTTP
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Creating and shutting down clients must not leak threads or file descriptors.
///
/// The cycles run in an exit test, i.e. in a child process of their own: counting
/// `/proc/self/fd` and `/proc/self/task` is only meaningful where no other test opens files or
/// starts threads at the same time, and the whole package's tests run in parallel in one process.
@Suite("Resources", .timeLimit(.minutes(1)))
struct ResourceTests {
    @Test("40 create/request/shutdown cycles leave no threads, file descriptors or connections behind")
    func noLeaks() async throws {
        // The child measures and reports on stderr; the parent judges, so a failure shows the numbers.
        let result = try #require(
            await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                let report = try await LeakCheck.run(cycles: 40)
                let line = Array((report.encoded + "\n").utf8)
                _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            })
        let output = String(decoding: result.standardErrorContent, as: UTF8.self)
        let report = try #require(LeakCheck(decoding: output), "no report in the child's stderr: \(output)")

        #expect(report.fileDescriptors.before > 0 && report.threads.before > 0, "/proc/self must be readable")
        // A leak grows with the cycle count (40); the slack only absorbs things that appear once,
        // such as the concurrency pool growing to its full width.
        #expect(report.fileDescriptors.after <= report.fileDescriptors.before + 4, "\(report)")
        #expect(report.threads.after <= report.threads.before + 2, "\(report)")
        // Every connection was closed from the client side, and each cycle used exactly one.
        #expect(report.openConnectionsAfter == 0, "\(report)")
        #expect(report.acceptedConnections == report.cycles, "\(report)")
    }

    @Test("each client's loop thread is named curl-loop (top -H tells it apart) and is gone after shutdown")
    func theLoopThreadIsNamedAndEndsWithShutdown() async throws {
        let result = try #require(
            await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                let before = ProcessResources.current().threads(named: CurlHTTPClient.threadName)
                let client = try CurlHTTPClient()
                // The thread names itself as it starts.
                _ = await eventually(timeout: .seconds(5)) { ProcessResources.current().threads(named: CurlHTTPClient.threadName) == 1 }
                let running = ProcessResources.current().threads(named: CurlHTTPClient.threadName)
                client.shutdown()
                // `shutdown` joins the thread; `pthread_join` returns once the kernel clears its id, a moment before
                // its /proc/self/task entry goes: wait for that (a thread that never ends still fails).
                _ = await eventually(timeout: .seconds(10)) { ProcessResources.current().threads(named: CurlHTTPClient.threadName) == 0 }
                let after = ProcessResources.current().threads(named: CurlHTTPClient.threadName)
                let line = Array("curl-loop threads \(before) \(running) \(after)\n".utf8)
                _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            })
        let output = String(decoding: result.standardErrorContent, as: UTF8.self)
        #expect(output.contains("curl-loop threads 0 1 0"), "before, running, after shutdown: \(output)")
    }
}

/// The measurement behind ``ResourceTests``, run inside the exit test's child process.
private struct LeakCheck: CustomStringConvertible {
    var fileDescriptors: (before: Int, after: Int)
    var threads: (before: Int, after: Int)
    var openConnectionsAfter: Int
    var acceptedConnections: Int
    var cycles: Int

    init(
        fileDescriptors: (before: Int, after: Int), threads: (before: Int, after: Int),
        openConnectionsAfter: Int, acceptedConnections: Int, cycles: Int
    ) {
        self.fileDescriptors = fileDescriptors
        self.threads = threads
        self.openConnectionsAfter = openConnectionsAfter
        self.acceptedConnections = acceptedConnections
        self.cycles = cycles
    }

    /// One line the parent process can find in the child's stderr.
    var encoded: String {
        "leakcheck \(fileDescriptors.before) \(fileDescriptors.after) \(threads.before) \(threads.after) "
            + "\(openConnectionsAfter) \(acceptedConnections) \(cycles)"
    }

    /// Reads the line ``encoded`` wrote, wherever it is in `output`.
    init?(decoding output: String) {
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("leakcheck ") }) else { return nil }
        let numbers = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        guard numbers.count == 7 else { return nil }
        self.init(
            fileDescriptors: (numbers[0], numbers[1]), threads: (numbers[2], numbers[3]),
            openConnectionsAfter: numbers[4], acceptedConnections: numbers[5], cycles: numbers[6])
    }

    var description: String {
        "fds \(fileDescriptors.before) -> \(fileDescriptors.after), threads \(threads.before) -> \(threads.after), "
            + "connections still open at the server: \(openConnectionsAfter), accepted \(acceptedConnections) for \(cycles) cycles"
    }

    static func run(cycles: Int) async throws -> LeakCheck {
        let server = try TestHTTPServer { _ in .respond(status: 200, body: Array("ok".utf8)) }
        defer { server.stop() }
        // Warm-up: libcurl's one-time set-up, the concurrency pool's threads, the server's first thread.
        try await cycle(server: server, explicitShutdown: true)
        _ = await eventually(timeout: .seconds(5)) { server.openConnections == 0 }
        let fdsBefore = ProcessResources.current().descriptorCount
        let threadsBefore = ProcessResources.current().threadCount

        for index in 0..<cycles {
            // Every other client is just dropped: deinit must shut it down just as well.
            try await cycle(server: server, explicitShutdown: index.isMultiple(of: 2))
        }

        // The server's connection threads end when they see the client hang up.
        _ = await eventually(timeout: .seconds(5)) { server.openConnections == 0 }
        _ = await eventually(timeout: .seconds(5)) {
            ProcessResources.current().descriptorCount <= fdsBefore && ProcessResources.current().threadCount <= threadsBefore
        }
        return LeakCheck(
            fileDescriptors: (fdsBefore, ProcessResources.current().descriptorCount),
            threads: (threadsBefore, ProcessResources.current().threadCount),
            openConnectionsAfter: server.openConnections,
            acceptedConnections: server.acceptedConnections - 1,
            cycles: cycles)
    }

    private static func cycle(server: TestHTTPServer, explicitShutdown: Bool) async throws {
        let client = try CurlHTTPClient()
        let body = try await client.fetch(server.url("/ping"))
        guard body == Array("ok".utf8) else { throw UnexpectedBody(bytes: body) }
        if explicitShutdown { client.shutdown() }
    }
}

/// A cycle's request answered with something else than "ok": fails the test that ran it.
private struct UnexpectedBody: Error {
    let bytes: [UInt8]
}
