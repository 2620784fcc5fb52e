import Foundation

/// Open descriptors and threads of this process, from /proc.
enum ProcessResources {
    static var descriptors: Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []).count
    }

    /// Every thread of the process.
    static var threads: Int {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).count
    }

    /// Threads named `embedded-http`: the server's own.
    static var serverThreads: Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            return name.trimmingCharacters(in: .whitespacesAndNewlines) == "embedded-http"
        }.count
    }
}
