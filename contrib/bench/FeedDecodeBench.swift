// Times one decoder over a feed file: `FeedDecodeBench MODE FILE [RUNS]`. Built by contrib/bench/feed-decode.sh
// together with the Feed sources (not by SwiftPM), optimised, without sanitizers. MODE:
//   new         GalleryFeed.decode (the streaming FeedReader the agent uses), a first poll
//   new-repoll  the same, given the keys of the same feed decoded once before (`known`): a poll of the
//               unchanged feed, as the agent does it
//   old         GalleryFeed.decodeWithJSONDecoder (JSONDecoder into [FeedItem], the agent's decoder before)
//   old-repoll  the same with `known`
//   read        only reads the file: the baseline of the peak RSS the others add to
// Prints the minimum and median wall time of RUNS decodes and the process's peak RSS (getrusage).
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// CPU time of the calling thread (`CLOCK_THREAD_CPUTIME_ID`): on a loaded machine, steadier than wall time.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

@main
enum FeedDecodeBench {
    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3, ["new", "new-repoll", "old", "old-repoll", "read"].contains(arguments[1]) else {
            FileHandle.standardError.write(Data("usage: FeedDecodeBench new|new-repoll|old|old-repoll|read FILE [RUNS]\n".utf8))
            exit(64)
        }
        let mode = arguments[1]
        let body = [UInt8](try Data(contentsOf: URL(fileURLWithPath: arguments[2])))
        let runs = arguments.count > 3 ? Int(arguments[3]) ?? 5 : 5
        var times: [Duration] = [], cpuTimes: [Double] = []
        var summary = "read \(body.count) bytes"
        let decode = { (known: [AssetKey]) throws(SyncError) -> GalleryFeed in
            try mode.hasPrefix("new") ? GalleryFeed.decode(body, known: known) : GalleryFeed.decodeWithJSONDecoder(body, known: known)
        }
        let known = mode.hasSuffix("repoll") ? try decode([]).uniqueKeys : []
        if mode != "read" {
            for _ in 0..<runs {
                let clock = ContinuousClock()
                let start = clock.now, cpuStart = threadCPUSeconds()
                let feed = try decode(known)
                times.append(start.duration(to: clock.now))
                cpuTimes.append(threadCPUSeconds() - cpuStart)
                summary = "\(feed.entries.count) entries, \(feed.uniqueKeys.count) unique, \(feed.rejections.count) refused"
            }
        }
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        let sorted = times.sorted()
        let milliseconds = { (duration: Duration) in
            String(format: "%.1f", Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15)
        }
        let cpu = cpuTimes.sorted()
        let timing = sorted.isEmpty ? "" : " wall min \(milliseconds(sorted[0])) ms, median \(milliseconds(sorted[sorted.count / 2])) ms;"
            + " CPU min \(String(format: "%.1f", cpu[0] * 1000)) ms, median \(String(format: "%.1f", cpu[cpu.count / 2] * 1000)) ms over \(runs) runs;"
        print("\(mode):\(timing) peak RSS \(usage.ru_maxrss / 1024) MiB (\(summary))")
    }
}
