import Foundation
import TestSupport
import Testing

/// The unit files in contrib/systemd, checked by systemd's own parser against the agent binary of this build.
@Suite(.timeLimit(.minutes(2)))
struct SystemdUnitTests {
    static let analyzer = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: analyzer != nil, "systemd-analyze is not installed"))
    func bothUnitsVerifyCleanWithTheBuiltBinary() async throws {
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let script = repository.appendingPathComponent("contrib/systemd/verify-units.sh").path
        let output = TemporaryDirectory("units")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [script, AgentProcess.binary]
        let log = output.file("verify.out")
        #expect(FileManager.default.createFile(atPath: log, contents: nil))
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardError = process.standardOutput
        try process.run()
        process.waitUntilExit()
        let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 0, "systemd-analyze verify: \(said)")
        #expect(said.contains("verify clean"))
    }
}
