#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The name of the calling thread, as `/proc/PID/task/*/comm` and `top -H` show it.
public enum ThreadName {
    /// Names the calling thread by writing `/proc/thread-self/comm`, which is what `pthread_setname_np` does
    /// on Linux (that function is not visible through Swift's `Glibc` module). The kernel keeps at most 15
    /// bytes. Best effort: a thread without a name works the same.
    public static func setCurrent(_ name: String) {
        let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { _ = close(fd) }
        var bytes = Array(name.utf8.prefix(15))
        _ = write(fd, &bytes, bytes.count)
    }
}
