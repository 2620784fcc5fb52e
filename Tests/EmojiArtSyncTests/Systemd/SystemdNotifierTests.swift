import EmojiArtSync
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// sd_notify as the agent speaks it, read from a real datagram socket.
@Suite(.timeLimit(.minutes(3)))
struct SystemdNotifierTests {
    @Test func theAbstractNamespaceFormSendsOneDatagramPerMessageAndStatusOnlyWhenItChanges() async throws {
        let address = try #require(UnixSocketAddress("@emojiart-sync-test-\(UUID().uuidString)"))
        #expect(address.isAbstract)
        let socket = try NotifySocket(address)
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": address.description])

        notifier.ready(status: "starting")
        notifier.status("3 ok\nsecond line")
        notifier.status("3 ok\nsecond line")
        notifier.status("4 ok")
        notifier.reloading()
        notifier.stopping()

        #expect(try await socket.next() == "READY=1\nSTATUS=starting")
        #expect(try await socket.next() == "STATUS=3 ok second line", "one line, and the repeat is not sent")
        #expect(try await socket.next() == "STATUS=4 ok")
        let reloading = try await socket.next().split(separator: "\n")
        #expect(reloading.first == "RELOADING=1")
        #expect(reloading.count == 2 && reloading[1].hasPrefix("MONOTONIC_USEC=") && UInt64(reloading[1].dropFirst(15)) != nil)
        #expect(try await socket.next() == "STOPPING=1")
    }

    @Test func withoutNotifySocketNothingIsSent() {
        let notifier = SystemdNotifier(environment: [:])
        #expect(notifier.socket == nil)
        #expect(notifier.send(["READY=1"]) == false)
    }

    @Test func theWatchdogIsOnlyOursWhenItsPidIsOursOrUnset() {
        let me = getpid()
        #expect(SystemdWatchdog(environment: ["WATCHDOG_USEC": "4000000"], pid: me)?.pingInterval == .seconds(2))
        #expect(SystemdWatchdog(environment: ["WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "\(me)"], pid: me) != nil)
        #expect(SystemdWatchdog(environment: ["WATCHDOG_USEC": "4000000", "WATCHDOG_PID": "\(me + 1)"], pid: me) == nil)
        #expect(SystemdWatchdog(environment: ["WATCHDOG_USEC": "0"], pid: me) == nil)
        #expect(SystemdWatchdog(environment: ["WATCHDOG_USEC": "soon"], pid: me) == nil)
        #expect(SystemdWatchdog(environment: [:], pid: me) == nil)
    }

    /// The agent binary under a simulated `Type=notify` service: READY once running, STATUS as the first pass
    /// lands, WATCHDOG pings, RELOADING/READY around SIGHUP, STOPPING on SIGTERM, in that order.
    @Test func theAgentProcessTellsSystemdItsLife() async throws {
        let gallery = try await GalleryFixture(count: 12)
        let dir = TemporaryDirectory("notify")
        let sockets = TemporaryDirectory("notify-socket")
        let address = try #require(UnixSocketAddress(sockets.file("notify")))
        let socket = try NotifySocket(address)
        let child = try AgentProcess(
            ["--dir", dir.path, "--server", gallery.baseURL, "--quiet", "--retries", "0"],
            outputDirectory: sockets.path,
            environment: ["NOTIFY_SOCKET": address.description, "WATCHDOG_USEC": "400000"])
        defer { child.signal(SIGKILL) }

        let first = try await socket.next()
        #expect(first.hasPrefix("READY=1\n"), "READY=1 comes first, got \(first)")
        let synced = "=\(gallery.validNumbers.count) ok, "
        let status = try await socket.next { $0.hasPrefix("STATUS=") && $0.contains(synced) }
        #expect(!status.before.contains { $0.contains("READY=1") || $0.contains("STOPPING=1") })
        _ = try await socket.next { $0 == "WATCHDOG=1" }

        child.signal(SIGHUP)
        let reloading = try await socket.next { $0.hasPrefix("RELOADING=1\nMONOTONIC_USEC=") }
        #expect(!reloading.before.contains { $0.contains("READY=1") })
        let ready = try await socket.next { $0.hasPrefix("READY=1") }
        #expect(!ready.before.contains { $0.contains("STOPPING=1") })

        child.signal(SIGTERM)
        let stopping = try await socket.next { $0 == "STOPPING=1" }
        #expect(!stopping.before.contains { $0.contains("READY=1") || $0.contains("RELOADING=1") })
        #expect(await child.waitForExit() == 0)
        await gallery.stop()
    }
}
