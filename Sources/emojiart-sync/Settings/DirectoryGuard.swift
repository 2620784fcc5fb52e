import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Refuses a DIR that is the root of a file system or the user's home itself, unless `--allow-root-dir`: the agent
/// writes a PNG per asset and its state directory into DIR and removes its own files when items leave the feed,
/// which is not what anyone means for `/`, a mounted disk's root or `~` (a `--dir` left empty by a script, say).
enum DirectoryGuard {
    /// Why `path` may not be DIR, or nil. A path that does not exist yet is none of these (it is created).
    static func refusal(_ path: String, home: String?) -> String? {
        guard let real = realPath(path) else { return nil }
        if real == "/" { return "it is the root of the file system" }
        if let home, let realHome = realPath(home), realHome == real { return "it is your home directory itself" }
        var itself = stat(), parent = stat()
        guard stat(real, &itself) == 0, stat(real + "/..", &parent) == 0 else { return nil }
        if itself.st_dev != parent.st_dev || itself.st_ino == parent.st_ino {
            return "it is the root of a file system (a mount point)"
        }
        return nil
    }

    /// The user's home: `$HOME`, else the password database's.
    static func home(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let home = environment["HOME"], !home.isEmpty { return home }
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory)
    }

    /// `path` with every symbolic link, `.` and `..` resolved; nil when it does not exist.
    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
