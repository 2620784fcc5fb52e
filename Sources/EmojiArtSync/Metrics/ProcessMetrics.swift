import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// The standard `process_*` metrics of Prometheus client libraries, read from `/proc` at each scrape and written
/// in the text format after the registry's own: swift-prometheus 2 has no process collector, and these are
/// values the kernel keeps (a counter of CPU seconds cannot be set through swift-metrics, only incremented).
enum ProcessMetrics {
    /// The exposition text: resident and virtual memory, CPU seconds, open and maximum descriptors, start time.
    /// A value that cannot be read (no `/proc`) is left out, never made up.
    static func exposition() -> String {
        var text = ""
        func metric(_ name: String, _ type: String, _ help: String, _ value: Double?) {
            guard let value else { return }
            text += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(Self.format(value))\n"
        }
        let stat = selfStat()
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        metric("process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
               stat.map { Double($0.userTicks + $0.systemTicks) / ticks })
        metric("process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
               stat.map { Double($0.residentPages) * Double(sysconf(Int32(_SC_PAGESIZE))) })
        metric("process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.", stat.map { Double($0.virtualBytes) })
        metric("process_start_time_seconds", "gauge", "Start time of the process since unix epoch in seconds.",
               stat.flatMap { stat in bootTime().map { $0 + Double(stat.startTicks) / ticks } })
        metric("process_open_fds", "gauge", "Number of open file descriptors.", openDescriptors().map(Double.init))
        var limit = rlimit()
        metric("process_max_fds", "gauge", "Maximum number of open file descriptors.",
               getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 ? Double(limit.rlim_cur) : nil)
        return text
    }

    /// What `/proc/self/stat` says of the process (proc(5): fields 14, 15, 22, 23 and 24).
    struct Stat {
        var userTicks: UInt64
        var systemTicks: UInt64
        var startTicks: UInt64
        var virtualBytes: UInt64
        var residentPages: UInt64
    }

    static func selfStat() -> Stat? {
        guard let text = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")  // the command name may hold spaces and parentheses
        else { return nil }
        // Fields from the third (state) on: field N is at index N - 3.
        let fields = text[text.index(after: close)...].split(separator: " ")
        func field(_ number: Int) -> UInt64? {
            fields.count > number - 3 ? UInt64(fields[number - 3]) : nil
        }
        guard let user = field(14), let system = field(15), let start = field(22), let virtual = field(23),
            let resident = field(24)
        else { return nil }
        return Stat(userTicks: user, systemTicks: system, startTicks: start, virtualBytes: virtual, residentPages: resident)
    }

    /// The boot time, seconds since the epoch (`btime` of `/proc/stat`).
    static func bootTime() -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("btime ") {
            return Double(PlainText.trimmed(line.dropFirst(6)))
        }
        return nil
    }

    /// Entries of `/proc/self/fd`, less the one the listing itself opens.
    static func openDescriptors() -> Int? {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return nil }
        return max(0, names.count - 1)
    }

    /// A whole number without a fraction, else as Swift prints a `Double`.
    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
