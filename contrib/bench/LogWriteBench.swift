// Times logging N lines through LogSink: `LogWriteBench FILE N [stderr]`. Built by contrib/bench/log-write.sh
// with the Logging sources of the tree being measured (no SwiftPM); `-D BUFFERED` where the sink buffers.
// Prints how long the N write(line:) calls took on the calling thread (what a logger on the SyncActor pays),
// the time until every line is in the file, and the process's CPU time (all threads, getrusage).
//
// `LogWriteBench FILE N access` (built with `-D ACCESS_LINES`): N access lines the old way, swift-log's
// `logger.info("asset", metadata: [five entries])` through LogfmtLogHandler, then N the direct way,
// AccessLineWriter in batches of 256, each into a fresh FILE.PATH; per path lines/s and ns per line on the
// calling thread, and heap allocations per line (all threads) when malloc-count.c is preloaded.
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

@main
enum LogWriteBench {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3, let count = Int(arguments[2]) else {
            FileHandle.standardError.write(Data("usage: LogWriteBench FILE N [stderr|access]\n".utf8))
            exit(64)
        }
        #if ACCESS_LINES
        if arguments.count > 3 && arguments[3] == "access" {
            try AccessLinePaths.run(path: arguments[1], count: count)
            return
        }
        #endif
        let sink = try LogSink(path: arguments[1], alsoStandardError: arguments.count > 3)
        // A line as the agent writes one per memory hit, formatted once: the formatting is the same either way.
        let line = LogfmtFormatter.line(
            timestamp: Date(), level: .info, message: "asset ready",
            metadata: ["event": "asset", "hit": "memory", "key": "/gallery/image/12345.png", "file": "gallery_image_12345_png.png"])
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<count { sink.write(line: line) }
        let calls = start.duration(to: clock.now)
        #if BUFFERED
        sink.flush()
        #endif
        let written = start.duration(to: clock.now)
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let cpu = Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
        let milliseconds = { (duration: Duration) in
            String(format: "%.1f", Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: arguments[1])[.size] as? Int) ?? 0
        print("\(count) lines of \(line.utf8.count + 1) bytes: calls \(milliseconds(calls)) ms, in the file after \(milliseconds(written)) ms, CPU \(String(format: "%.0f", cpu * 1000)) ms, file \(size) bytes")
    }
}

#if ACCESS_LINES
/// The access line's two paths side by side (see the header).
enum AccessLinePaths {
    /// Heap allocations so far, from malloc-count.c when it is preloaded.
    static let allocations: (@convention(c) () -> UInt64)? = dlsym(nil, "emojiart_malloc_count").map {
        unsafeBitCast($0, to: (@convention(c) () -> UInt64).self)
    }

    static func run(path: String, count: Int) throws {
        // The strings the agent holds already (an AssetKey's rawValue, a Hit's): made before the clock starts.
        let keys = (0..<1000).map { "/gallery/image/\($0 + 12345).png" }
        let files = (0..<1000).map { "gallery_image_\($0 + 12345)_png.png" }
        let hits = ["memory", "disk", "network"]
        measure("swift-log", path: path + ".swift-log", count: count) { sink in
            let logger = Logger(label: "bench") { _ in LogfmtLogHandler(sink: sink, level: .info, format: .logfmt) }
            for index in 0..<count {
                logger.info("asset", metadata: [
                    "event": "asset", "key": .string(keys[index % 1000]), "hit": .string(hits[index % 3]),
                    "bytes": .stringConvertible(index), "file": .string(files[index % 1000]),
                ])
            }
        }
        measure("direct", path: path + ".direct", count: count) { sink in
            var writer = AccessLineWriter(sink: sink, level: .info, format: .logfmt)
            for index in 0..<count {
                writer.add(key: keys[index % 1000], hit: hits[index % 3], bytes: index, file: files[index % 1000])
                if writer.pendingLines == 256 { writer.append() }
            }
            writer.append()
        }
    }

    static func measure(_ name: String, path: String, count: Int, _ body: (LogSink) -> Void) {
        unlink(path)
        guard let sink = try? LogSink(path: path, alsoStandardError: false) else { fatalError("cannot open \(path)") }
        let before = allocations?() ?? 0
        let clock = ContinuousClock()
        let start = clock.now
        body(sink)
        let calls = start.duration(to: clock.now)
        let allocated = (allocations?() ?? 0) - before
        sink.flush()
        let seconds = Double(calls.components.seconds) + Double(calls.components.attoseconds) / 1e18
        let perLine = allocations == nil ? "n/a (malloc-count.c not preloaded)" : String(format: "%.2f", Double(allocated) / Double(count))
        let label = name.padding(toLength: 10, withPad: " ", startingAt: 0)
        print(label + String(format: "%d lines: %.0f lines/s, %.0f ns/line on the caller, allocations/line ",
                             count, Double(count) / seconds, seconds * 1e9 / Double(count)) + perLine)
    }
}
#endif
