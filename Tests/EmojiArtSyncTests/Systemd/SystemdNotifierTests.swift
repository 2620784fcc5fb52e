import EmojiArtGallery
@testable import EmojiArtSync
import Foundation
import TestSupport
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
        let service = try NotifyService(gallery, dir: dir, environment: ["WATCHDOG_USEC": "400000"])
        let (socket, child) = (service.socket, service.child)
        defer { service.child.signal(SIGKILL) }

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

    /// `systemctl reload` returns when systemd hears READY=1 after RELOADING=1: that must wait for the reload's
    /// own pass (feed re-read, every entry accessed, DIR rescanned), not come the moment SIGHUP is heard. The
    /// gallery answers each request 300 ms late, so the pass cannot end before the signal is answered.
    @Test func aReloadIsReadyOnlyOnceItsPassIsDone() async throws {
        let gallery = try await GalleryFixture(count: 12, faults: GalleryFaults(latencyMilliseconds: 300))
        let dir = TemporaryDirectory("notify-reload")
        let service = try NotifyService(gallery, dir: dir)
        let (socket, child) = (service.socket, service.child)
        defer { service.child.signal(SIGKILL) }
        _ = try await socket.next { $0.hasPrefix("STATUS=") && $0.contains("last poll") }

        child.signal(SIGHUP)
        _ = try await socket.next { $0.hasPrefix("RELOADING=1") }
        _ = try await socket.next { $0.hasPrefix("READY=1") }
        // What the log holds when READY=1 arrives: the reload's poll line comes after its signal line.
        let lines = logLines(dir.path)
        let signalLine = try #require(lines.lastIndex { $0.contains("event=signal") && $0.contains("signal=SIGHUP") })
        #expect(lines[signalLine...].contains { $0.contains("event=poll") }, "READY=1 came before the reload's poll ended")

        child.signal(SIGTERM)
        #expect(await child.waitForExit() == 0)
        await gallery.stop()
    }
}

/// The agent binary on a directory, started as a `Type=notify` service would start it, with the socket that
/// plays systemd's side. Owns the temporary directory holding the socket and the agent's output, so both last
/// as long as the test holds this.
final class NotifyService {
    let socket: NotifySocket
    let child: AgentProcess
    private let sockets = TemporaryDirectory("notify-socket")

    init(_ gallery: GalleryFixture, dir: TemporaryDirectory, environment: [String: String] = [:]) throws {
        let address = try #require(UnixSocketAddress(sockets.file("notify")))
        socket = try NotifySocket(address)
        child = try AgentProcess(
            ["--dir", dir.path, "--server", gallery.baseURL, "--quiet", "--retries", "0"],
            outputDirectory: sockets.path, environment: environment.merging(["NOTIFY_SOCKET": address.description]) { $1 })
    }
}
