import Foundation

/// What this process holds right now, from /proc: its descriptors by target (`anon_inode:inotify`,
/// `socket:[123]`, a path) and its threads by name (`/proc/self/task/*/comm`). The tests' one reader of both.
///
/// Tests share the process with others that run beside them, so a count of every thread or descriptor means
/// something only in a test that owns the process (an exit test: `#expect(processExitsWith:)`); any other test
/// counts what it can tell apart, threads by the name the code under test gives them, descriptors by target.
public struct ProcessResources: CustomStringConvertible, Sendable {
    /// `readlink` of every /proc/self/fd entry.
    public let descriptorTargets: [String]
    /// `comm` of every /proc/self/task entry.
    public let threadNames: [String]

    public static func current() -> ProcessResources {
        let manager = FileManager.default
        let fds = (try? manager.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        // The listing's own descriptor is gone by the time its target is read: it drops out here.
        let targets = fds.compactMap { try? manager.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0) }
        let tasks = (try? manager.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        let names = tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return ProcessResources(descriptorTargets: targets, threadNames: names)
    }

    /// Every descriptor: meaningful in an exit test only.
    public var descriptorCount: Int { descriptorTargets.count }
    /// Every thread: meaningful in an exit test only.
    public var threadCount: Int { threadNames.count }
    public var inotifyDescriptors: Int { descriptorTargets.filter { $0 == "anon_inode:inotify" }.count }
    public var eventDescriptors: Int { descriptorTargets.filter { $0 == "anon_inode:[eventfd]" }.count }

    /// Threads named `name` (the kernel keeps 15 bytes of a name).
    public func threads(named name: String) -> Int { threadNames.filter { $0 == name }.count }
    /// Threads whose name starts with `prefix` (`dirwatch-` for every watcher's).
    public func threads(prefixed prefix: String) -> Int { threadNames.filter { $0.hasPrefix(prefix) }.count }
    /// Whether a thread named `name` exists.
    public func hasThread(named name: String) -> Bool { threadNames.contains(name) }

    /// Whether a thread named `name` is asleep (state `S` in `/proc/self/task/*/stat`): blocked in a system
    /// call such as `poll(2)`, not running. For a test that acts on a thread once it has parked.
    public static func isAsleep(threadNamed name: String) -> Bool {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.contains { task in
            let comm = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard comm == name, let stat = try? String(contentsOfFile: "/proc/self/task/\(task)/stat", encoding: .utf8),
                let end = stat.lastIndex(of: ")")
            else { return false }
            // `pid (comm) state ...`: the name may hold spaces, so the state is read after the last parenthesis.
            return stat[stat.index(after: end)...].split(separator: " ").first == "S"
        }
    }

    public var description: String {
        "fds=\(descriptorCount) inotify=\(inotifyDescriptors) eventfd=\(eventDescriptors) threads=\(threadCount)"
    }

    /// Polls until `condition` holds (a new thread names itself a moment after it starts; a joined one can
    /// linger in /proc for a moment), or five seconds passed; returns the last reading.
    public static func settle(until condition: (ProcessResources) -> Bool) async -> ProcessResources {
        var reading = current()
        _ = await eventually(timeout: .seconds(5)) {
            reading = current()
            return condition(reading)
        }
        return reading
    }
}
