// Reproducer: ThreadSanitizer reports a data race on a counter that is only ever touched inside
// Synchronization.Mutex.withLock. Build and run it with contrib/sanitizers/tsan-mutex-repro.sh. On Swift 6.3 on
// Linux, TSan prints "WARNING: ThreadSanitizer: data race" for `value += 1` below: the Mutex's lock and unlock
// happen in the uninstrumented Synchronization library (a futex on an atomic word), so TSan sees two
// threads writing the same memory with no synchronisation between them. See docs/RELIABILITY.md.
import Synchronization

let counter = Mutex(0)

@main
struct MutexCounter {
    static func main() async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<200_000 { counter.withLock { value in value += 1 } }
                }
            }
        }
        print("counter = \(counter.withLock { $0 })")
    }
}
