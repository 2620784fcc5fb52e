import Foundation
import POSIXThreads
import Synchronization
import TestSupport
import Testing

/// Real threads: each carries its name in `/proc`, is gone once joined, and an object handed to one lives
/// exactly as long as it does.
@Suite(.timeLimit(.minutes(1)))
struct JoinableThreadTests {
    /// The `comm` of every thread of this process: each test looks for its own unique name.
    static func threadNames() -> [String] { ProcessResources.current().threadNames }

    /// A name no other thread of the test process carries.
    static func uniqueName() -> String {
        "jt-\(UInt32.random(in: 0..<1_000_000_000))"
    }

    /// `pthread_join` returns once the thread's id is cleared, which the kernel does on the thread's way out, a
    /// moment before its `/proc/self/task` entry goes: the entry is waited for, not expected gone at once (a
    /// fresh-clone CI run saw it still listed right after the join).
    @Test func theThreadCarriesItsNameAndIsGoneOnceJoined() async throws {
        let name = Self.uniqueName()
        let seen = Mutex<[String]>([])
        let thread = try JoinableThread.start(name: name) {
            seen.withLock { $0 = Self.threadNames() }
        }
        thread.join()
        #expect(seen.withLock { $0 }.contains(name), "the thread saw itself named \(name)")
        #expect(await eventually(timeout: .seconds(10)) { !Self.threadNames().contains(name) }, "joined, the thread is gone")
    }

    @Test func aNameLongerThanTheKernelKeepsIsCutTo15Bytes() throws {
        let name = Self.uniqueName() + "-and-much-longer"
        let seen = Mutex<[String]>([])
        try JoinableThread.start(name: name) { seen.withLock { $0 = Self.threadNames() } }.join()
        #expect(seen.withLock { $0 }.contains(String(decoding: name.utf8.prefix(15), as: UTF8.self)))
    }

    /// What the test learns from the thread and from the handed object's `deinit`.
    final class Flags: Sendable {
        private let freed = Atomic<Bool>(false)
        private let ran = Atomic<Bool>(false)
        func markFreed() { freed.store(true, ordering: .sequentiallyConsistent) }
        func markRan() { ran.store(true, ordering: .sequentiallyConsistent) }
        var isFreed: Bool { freed.load(ordering: .sequentiallyConsistent) }
        var didRun: Bool { ran.load(ordering: .sequentiallyConsistent) }
    }

    /// A thread-confined object (not `Sendable`) that says when it is freed.
    final class Handed {
        let flags: Flags
        let gate: DispatchSemaphore
        init(flags: Flags, gate: DispatchSemaphore) {
            self.flags = flags
            self.gate = gate
        }
        deinit { flags.markFreed() }
    }

    @Test func aHandedObjectLivesExactlyAsLongAsTheThread() throws {
        let flags = Flags()
        let gate = DispatchSemaphore(value: 0)
        let thread = try JoinableThread.start(name: Self.uniqueName(), handing: Handed(flags: flags, gate: gate)) {
            handed in
            handed.gate.wait()
            handed.flags.markRan()
        }
        #expect(!flags.isFreed, "the running thread holds the object")
        gate.signal()
        thread.join()
        #expect(flags.didRun)
        #expect(flags.isFreed, "the object went with the thread")
    }

    @Test func aDetachedThreadRunsNamedAndEndsOnItsOwn() async throws {
        let name = Self.uniqueName()
        let seen = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        try JoinableThread.startDetached(name: name) {
            seen.withLock { $0 = Self.threadNames() }
            done.signal()
        }
        done.wait()
        #expect(seen.withLock { $0 }.contains(name))
        let gone = await eventually { !Self.threadNames().contains(name) }
        #expect(gone, "a detached thread is freed by the kernel when it returns")
    }

    /// Joining a thread from itself would deadlock: it detaches it instead.
    @Test func aThreadThatJoinsItselfDoesNotDeadlock() throws {
        let me = Mutex<JoinableThread?>(nil)
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let thread = try JoinableThread.start(name: Self.uniqueName()) {
            started.wait()
            me.withLock { $0 }?.join()
            finished.signal()
        }
        me.withLock { $0 = thread }
        started.signal()
        #expect(finished.wait(timeout: .now() + 30) == .success)
    }
}
