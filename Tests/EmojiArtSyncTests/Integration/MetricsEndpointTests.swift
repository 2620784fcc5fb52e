import CurlHTTP
import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The Prometheus endpoint over real HTTP while a real agent syncs the bundled gallery: every counter must
/// say what the log says. Each agent records into a registry of its own (no process-global bootstrap), so
/// these tests can run beside any other.
@Suite(.timeLimit(.minutes(3)))
struct MetricsEndpointTests {
    /// One sample of the text exposition format: `name{label="value",...} number`.
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// Parses the exposition text; comments (`# TYPE`, `# HELP`) are skipped, anything unreadable fails the test.
    static func parse(_ text: String) throws -> [Sample] {
        var samples: [Sample] = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let match = line.wholeMatch(of: /([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/),
                let value = Double(match.output.3)
            else { throw TestFailure("unreadable exposition line: \(line)") }
            var labels: [String: String] = [:]
            if let body = match.output.2 {
                for pair in body.matches(of: /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/) {
                    labels[String(pair.output.1)] = String(pair.output.2)
                }
            }
            samples.append(Sample(name: String(match.output.1), labels: labels, value: value))
        }
        return samples
    }

    static func value(_ samples: [Sample], _ name: String, _ labels: [String: String] = [:]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    @Test func countersMatchTheLogOfARealSync() async throws {
        let gallery = try await GalleryFixture(count: 12)
        let dir = TemporaryDirectory("metrics")
        let listen = MetricsListenAddress(host: "127.0.0.1", port: 0)
        let agent = try await gallery.startAgent(dir: dir) { $0.metricsListen = listen }
        let registry = try #require(agent.background.agent.metricsRegistry)
        let endpoint = try await MetricsEndpoint.start(registry: registry, address: listen)
        #expect(endpoint.address.port != 0)
        let client = try CurlHTTPClient()
        defer { client.shutdown() }
        func scrape() async throws -> [Sample] {
            let response = try await client.get(endpoint.url)
            #expect(response.status == 200)
            return try Self.parse(String(decoding: response.body, as: UTF8.self))
        }

        // Memory hits (a full pass), disk hits (after a memory purge), a repair of a missing file.
        let valid = gallery.validNumbers.count
        let ready = try await eventually { Self.value(try await scrape(), "emojiart_sync_assets", ["state": "ok"]) == Double(valid) }
        #expect(ready, "the assets gauge reaches \(valid) ok")
        await agent.keeper.pollNow(fullPass: true)
        #expect(await eventually { logLines(dir.path).contains { $0.contains("hit=memory") } })
        _ = await agent.keeper.purgeMemory()
        await agent.keeper.pollNow(fullPass: true)
        #expect(await eventually { logLines(dir.path).contains { $0.contains("hit=disk") } })
        unlink(dir.file("gallery_image_1.png"))
        #expect(await eventually { logLines(dir.path).contains { $0.contains("event=repair") && $0.contains("reason=missing") } })
        #expect(await eventually { gallery.isMirrored(1, in: dir) })
        #expect(await agent.stop() == .success)

        // The agent has stopped, so hits are final. A retry of item 10 abandoned at the stop may still log its
        // failure: the failure counter is checked between the log before and after the scrape.
        let linesBefore = logLines(dir.path)
        let samples = try await scrape()
        let lines = logLines(dir.path)
        func logged(_ fragments: String..., in lines: [String]? = nil) -> Double {
            Double((lines ?? linesBefore).filter { line in fragments.allSatisfy { line.contains($0) } }.count)
        }
        // A pass writes one line per key: the feed's repeat listings are memory hits counted by its event=pass line.
        let repeats = Double(linesBefore.filter { $0.contains("event=pass") }.compactMap { line in
            line.split(separator: " ").first { $0.hasPrefix("repeats=") }.flatMap { Int($0.dropFirst(8)) }
        }.reduce(0, +))
        for source in ["memory", "disk", "network"] {
            let counted = Self.value(samples, "emojiart_sync_hits_total", ["source": source])
            #expect(counted == logged("event=asset", "hit=\(source) ") + (source == "memory" ? repeats : 0), "hits from \(source)")
            #expect((counted ?? 0) > 0, "the test produced \(source) hits")
        }
        #expect(Self.value(samples, "emojiart_sync_repairs_total", ["reason": "missing"]) == logged("event=repair", "reason=missing"))
        #expect(Self.value(samples, "emojiart_sync_repairs_total", ["reason": "corrupt"]) == 0)
        // A remembered failure (within its backoff) fails the access without a transfer: not counted. Accesses
        // that join one failing transfer share its one failure, so there are at most as many as failed lines.
        func invalidAccesses(in lines: [String]) -> Double {
            logged("result=failed", "valid PNG", in: lines) - logged("result=failed", "valid PNG", "remembered=true", in: lines)
        }
        #expect(invalidAccesses(in: linesBefore) > 0, "item 10 answers JSON, not a PNG")
        let invalidCounted = try #require(Self.value(samples, "emojiart_sync_failures_total", ["kind": "invalid_image"]))
        #expect(invalidCounted >= 1 && invalidCounted <= invalidAccesses(in: lines))
        // One duration per body received: each network hit had one, and so had each invalid body.
        let networkHits = try #require(Self.value(samples, "emojiart_sync_hits_total", ["source": "network"]))
        let durations = try #require(Self.value(samples, "emojiart_sync_fetch_duration_seconds_count"))
        #expect(networkHits < durations && durations <= networkHits + invalidCounted, "one duration per body")
        #expect((Self.value(samples, "emojiart_sync_bytes_fetched_total") ?? 0) > 0)
        #expect(Self.value(samples, "emojiart_sync_index_files") == Double(valid))

        // `status` (the file the agent publishes as it stops) says the same as the endpoint. Before, its memory
        // hits also counted accesses that joined a transfer which then failed, and its bytes only valid images.
        let status = try AgentStatus.read(from: dir.file(".emojiart-sync/status.json"))
        #expect(status.state == "stopped")
        #expect(Double(status.hits.memory) == Self.value(samples, "emojiart_sync_hits_total", ["source": "memory"]))
        #expect(Double(status.hits.disk) == Self.value(samples, "emojiart_sync_hits_total", ["source": "disk"]))
        #expect(Double(status.hits.network) == Self.value(samples, "emojiart_sync_hits_total", ["source": "network"]))
        #expect(Double(status.bytesFetched) == Self.value(samples, "emojiart_sync_bytes_fetched_total"))
        await endpoint.stop()
        await gallery.stop()
    }

    /// The feed lists each of items 10 and 20 (JSON, not images) three times: six failed accesses, logged once per
    /// asset in the pass (two lines), and two failed transfers, which is what the counter says (it counted six).
    @Test func failuresAreCountedPerLoadNotPerAccess() async throws {
        let dir = TemporaryDirectory("metrics-per-load")
        let samples = try Self.parse(try await Self.exposition(count: 29, dir: dir))
        let failedLines = logLines(dir.path).filter { $0.contains("result=failed") && $0.contains("valid PNG") }
        #expect(failedLines.count == 2, "\(failedLines.joined(separator: "\n"))")
        #expect(Self.value(samples, "emojiart_sync_failures_total", ["kind": "invalid_image"]) == 2)
        #expect(Self.value(samples, "emojiart_sync_fetch_duration_seconds_count") == 29)
    }

    /// The exposition text of an agent in `dir` (a new one by default) that synced a gallery of `count` items
    /// (every tenth a failure) once.
    static func exposition(count: Int = 12, dir: TemporaryDirectory = TemporaryDirectory("metrics-help")) async throws -> String {
        let gallery = try await GalleryFixture(count: count)
        let listen = MetricsListenAddress(host: "127.0.0.1", port: 0)
        var configuration = try gallery.configuration(dir: dir.path)
        configuration.metricsListen = listen
        let agent = try await SyncAgent(configuration: configuration)
        defer { agent.shutdown() }
        _ = try await agent.syncOnce()
        let endpoint = try await MetricsEndpoint.start(registry: try #require(agent.metricsRegistry), address: listen)
        let client = try CurlHTTPClient()
        defer { client.shutdown() }
        let response = try await client.get(endpoint.url)
        await endpoint.stop()
        await gallery.stop()
        return String(decoding: response.body, as: UTF8.self)
    }

    /// Before, no metric had a `# HELP` line (swift-metrics has no place for one), and promtool failed on each.
    @Test func everyMetricFamilyHasAHelpLine() async throws {
        let text = try await Self.exposition()
        func names(_ prefix: String) -> [String] {
            text.split(separator: "\n").filter { $0.hasPrefix(prefix) }.map { String($0.split(separator: " ")[2]) }
        }
        let families = names("# TYPE ")
        #expect(families.count == 16, "\(families)")
        #expect(Set(names("# HELP ")) == Set(families), "\(text)")
    }

    /// Before: nothing said when the feed was last reached, which build runs, or what the process costs, so "the
    /// gallery has been unreachable for ten minutes" could not be alerted on.
    @Test func pollsBuildAndProcessAreMeasured() async throws {
        let gallery = try await GalleryFixture(count: 3, imageSize: .small)
        let dir = TemporaryDirectory("metrics-polls")
        let listen = MetricsListenAddress(host: "127.0.0.1", port: 0)
        let started = Date()
        let agent = try await gallery.startAgent(dir: dir) { $0.metricsListen = listen }
        let endpoint = try await MetricsEndpoint.start(registry: try #require(agent.background.agent.metricsRegistry), address: listen)
        let client = try CurlHTTPClient()
        defer { client.shutdown() }
        func scrape() async throws -> [Sample] {
            try Self.parse(String(decoding: try await client.get(endpoint.url).body, as: UTF8.self))
        }
        #expect(try await eventually { Self.value(try await scrape(), "emojiart_sync_polls_total", ["result": "ok"]) == 1 })
        await agent.keeper.pollNow()  // unchanged: a 304
        #expect(try await eventually { Self.value(try await scrape(), "emojiart_sync_polls_total", ["result": "not_modified"]) == 1 })
        await gallery.stop()
        await agent.keeper.pollNow()  // the gallery is gone
        #expect(try await eventually { (Self.value(try await scrape(), "emojiart_sync_polls_total", ["result": "failed"]) ?? 0) >= 1 })
        let samples = try await scrape()
        let lastSuccess = try #require(Self.value(samples, "emojiart_sync_last_poll_success_timestamp_seconds"))
        #expect(lastSuccess >= started.timeIntervalSince1970 - 1 && lastSuccess <= Date().timeIntervalSince1970 + 1)
        let build = samples.first { $0.name == "emojiart_sync_build_info" }
        #expect(build?.value == 1 && build?.labels["version"] == EmojiArtSyncVersion.current && build?.labels["commit"] != nil, "\(String(describing: build))")
        #expect((Self.value(samples, "process_resident_memory_bytes") ?? 0) > 1_000_000)
        #expect((Self.value(samples, "process_open_fds") ?? 0) > 3)
        #expect((Self.value(samples, "process_cpu_seconds_total") ?? 0) > 0)
        let start = try #require(Self.value(samples, "process_start_time_seconds"))
        let now = Date().timeIntervalSince1970
        #expect(start <= now && start > now - 3600, "this test process started \(now - start) s ago?")
        #expect(await agent.stop() == .success)
        await endpoint.stop()
    }

    /// Prometheus' own linter, when installed (Debian package `prometheus`: 19 MB with a server daemon, so
    /// contrib/install-deps.sh does not install it and the test is skipped without it).
    @Test(.enabled(if: Self.promtool != nil, "promtool is not installed (Debian package prometheus)"))
    func promtoolAcceptsTheExposition() async throws {
        let text = try await Self.exposition()
        let promtool = Process()
        promtool.executableURL = URL(fileURLWithPath: try #require(Self.promtool))
        promtool.arguments = ["check", "metrics"]
        let input = Pipe()
        let output = Pipe()
        promtool.standardInput = input
        promtool.standardOutput = output
        promtool.standardError = output
        try promtool.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        promtool.waitUntilExit()
        #expect(promtool.terminationStatus == 0, "promtool check metrics: \(said)")
    }

    /// Where `promtool` is on `PATH`, if anywhere.
    static var promtool: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/promtool" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test func theOptionIsDocumentedAndCheckedByTheCommandLine() async throws {
        let output = TemporaryDirectory("metrics-cli")
        let help = try await AgentProcess.run(["--help"], outputDirectory: output.path)
        #expect(help.status == 0)
        #expect(help.stdout.contains("--metrics-listen") && help.stdout.contains("loopback"))
        let bad = try await AgentProcess.run(["--dir", output.file("d"), "--metrics-listen", "9464"], outputDirectory: output.path)
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--metrics-listen"))
    }
}
