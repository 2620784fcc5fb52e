import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

/// Faults only tests turn on, through the environment variable `EMOJIART_SYNC_TEST_FAULT` (a comma-separated
/// list), read once per process. They stand in for conditions a test cannot otherwise produce at the exact
/// moment that matters. The C shims read their own (`CShims/test_fault.h`: `renameat2-einval`, `o-tmpfile-eopnotsupp`,
/// `fanotify-eperm`); this reads the rest.
enum TestFaultSwitch {
    private static let faults: Set<Substring> = Set(
        (ProcessInfo.processInfo.environment["EMOJIART_SYNC_TEST_FAULT"] ?? "").split(separator: ","))

    /// `index-write-full`: every write of a file's row to the index fails as on a full disk (`SQLITE_FULL`),
    /// after the file itself was written and renamed into place.
    static let indexWritesFail = faults.contains("index-write-full")

    /// `commit-kill-STEP`: the process kills itself with `SIGKILL` at that step of a group commit (see
    /// `GroupCommitter.Step`), as a power cut or an OOM kill would, so a test can prove what a restart finds.
    static func killIfAsked(at step: GroupCommitter.Step) {
        guard faults.contains(Substring("commit-kill-" + step.rawValue)) else { return }
        kill(getpid(), SIGKILL)
    }
}
