import Foundation
import Testing

/// The programs link FoundationEssentials, never Foundation: Foundation brings ICU and its 34 MB of data into
/// each static binary, for locale handling nothing here uses (README, "Installing").
struct FoundationEssentialsTests {
    /// Every Swift file the programs are built from, by path relative to the repository.
    static func programSources() throws -> [String] {
        let root = RepositoryFiles.root
        let sources = root + "/Sources"
        let enumerator = try #require(FileManager.default.enumerator(atPath: sources))
        return enumerator.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }.map { "Sources/" + $0 }
    }

    @Test func noSourceOfTheProgramsImportsFoundation() throws {
        let sources = try Self.programSources()
        #expect(sources.count > 100)
        let offenders = try sources.filter { path in
            let text = try String(contentsOfFile: RepositoryFiles.root + "/" + path, encoding: .utf8)
            return text.split(separator: "\n").contains { line -> Bool in
                // Also with an attribute before it (`@_exported`, or the concurrency one) or a comment after it.
                let words = line.split(separator: " ")
                guard let at = words.firstIndex(of: "import"), at + 1 < words.count,
                    words[..<at].allSatisfy({ $0.hasPrefix("@") })
                else { return false }
                return words[at + 1] == "Foundation" || words[at + 1] == "FoundationNetworking"
            }
        }
        #expect(offenders.isEmpty, "import FoundationEssentials (and Glibc) instead: \(offenders)")
    }

    @Test(arguments: ["emojiart-sync", "emojiart-gallery"])
    func theBuiltProgramLinksNoFoundationNorICU(_ program: String) throws {
        let ldd = try #require(RepositoryFiles.tool("ldd"), "ldd is part of libc-bin")
        let binary = RepositoryFiles.buildDirectory + "/" + program
        let (status, output) = try RepositoryFiles.run(ldd, [binary])
        #expect(status == 0, "\(output)")
        #expect(output.contains("libFoundationEssentials"), "\(output)")
        for library in ["libFoundation.so", "libFoundationInternationalization", "lib_FoundationICU", "libicu"] {
            #expect(!output.contains(library), "\(program) links \(library)")
        }
    }
}
