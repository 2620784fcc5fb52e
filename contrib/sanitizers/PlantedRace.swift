// A real data race, planted on purpose: two threads increment a plain global without any lock. Run with the
// project's TSan suppressions (contrib/sanitizers/tsan.supp) to prove they do not hide real races: TSan must
// still print "WARNING: ThreadSanitizer: data race" for this program. Never part of the shipped code.
import Synchronization

// SAFETY: deliberately unsynchronised; this program exists to be reported by ThreadSanitizer.
nonisolated(unsafe) var unguarded = 0
let guarded = Mutex(0)

@main
struct PlantedRace {
    static func main() async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<200_000 {
                        guarded.withLock { $0 += 1 }  // fine, and suppressed when the suppressions are on
                        unguarded += 1  // the race
                    }
                }
            }
        }
        print("guarded = \(guarded.withLock { $0 }), unguarded = \(unguarded)")
    }
}
