import Foundation
import TestSupport
import Testing

/// The README's first command on a machine without a Swift toolchain: it said `contrib/demo.sh: line 11: swift:
/// command not found` (status 127). Now it says what is needed and where it comes from, and exits 1 before
/// installing anything. Run with a PATH of its own, holding only the tools the scripts call before the check.
@Suite(.timeLimit(.minutes(1)))
struct DemoPrerequisiteTests {
    @Test(arguments: ["contrib/demo.sh", "contrib/test.sh"])
    func withoutSwiftTheScriptSaysWhereAToolchainComesFrom(script: String) throws {
        let bin = try Self.pathWith(["dirname"])
        let run = try RepositoryFiles.run("/usr/bin/env", ["-i", "PATH=\(bin.path)", "/bin/bash", script])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("needs a Swift 6.2 (or newer) toolchain, and there is no swift on PATH"), "\(run.output)")
        #expect(run.output.contains("https://www.swift.org/install/linux/"), "\(run.output)")
        #expect(!run.output.contains("command not found"), "\(run.output)")
    }

    @Test func anOlderSwiftIsNamedWithItsVersion() throws {
        let bin = try Self.pathWith(["dirname", "sed", "head"])
        try "#!/bin/sh\necho 'Swift version 5.10.1 (swift-5.10.1-RELEASE)'\n".write(toFile: bin.file("swift"), atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin.file("swift"))
        let run = try RepositoryFiles.run("/usr/bin/env", ["-i", "PATH=\(bin.path)", "/bin/bash", "contrib/demo.sh"])
        #expect(run.status == 1, "\(run.output)")
        #expect(run.output.contains("needs Swift 6.2 or newer; \(bin.path)/swift is Swift 5.10"), "\(run.output)")
    }

    /// A directory holding links to `tools` (found on the test's PATH), to be a whole PATH.
    private static func pathWith(_ tools: [String]) throws -> TemporaryDirectory {
        let bin = TemporaryDirectory("path")
        for tool in tools {
            let found = try #require(RepositoryFiles.tool(tool), "\(tool) is not installed")
            try FileManager.default.createSymbolicLink(atPath: bin.file(tool), withDestinationPath: found)
        }
        return bin
    }
}
