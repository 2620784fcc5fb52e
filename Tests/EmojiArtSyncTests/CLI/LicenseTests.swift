import Foundation
import TestSupport
import Testing

/// The project can be shipped: a license at the top, a machine-readable copyright per Debian package naming every
/// SwiftPM package linked into its binary with that package's license, and one address for bug reports that the
/// package, the README and the man page agree on. Before: no LICENSE, a free-text copyright naming no license
/// of ours and none of the 11 linked packages, no bug address anywhere.
@Suite(.timeLimit(.minutes(1)))
struct LicenseTests {
    @Test func theProjectIsUnderTheApacheLicense() throws {
        let license = try String(contentsOfFile: RepositoryFiles.root + "/LICENSE", encoding: .utf8)
        #expect(license.contains("Apache License\n                           Version 2.0, January 2004"))
        #expect(license.contains("END OF TERMS AND CONDITIONS"))
        let readme = try String(contentsOfFile: RepositoryFiles.root + "/README.md", encoding: .utf8)
        #expect(readme.contains("Apache License 2.0"), "the README names no license")
    }

    /// Every package SwiftPM checked out for this build is linked into the agent (Package.swift's targets reach
    /// all of them), so its copyright names each, with the license its LICENSE.txt has: Apache-2.0, with the
    /// Runtime Library Exception when the file carries it.
    @Test func theAgentsCopyrightListsEveryLinkedPackageWithItsLicense() throws {
        let copyright = try DebianCopyright("emojiart-sync")
        let checkouts = URL(fileURLWithPath: RepositoryFiles.buildDirectory)
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("checkouts").path
        let packages = try FileManager.default.contentsOfDirectory(atPath: checkouts).filter { !$0.hasPrefix(".") }
        #expect(packages.count >= 11, "\(checkouts): \(packages)")
        for package in packages {
            let text = try String(contentsOfFile: "\(checkouts)/\(package)/LICENSE.txt", encoding: .utf8)
            #expect(text.contains("Apache License") && text.contains("Version 2.0"), "\(package) is not Apache-2.0: check its license")
            let expected = text.contains("Runtime Library Exception") ? "Apache-2.0 with Swift exception" : "Apache-2.0"
            #expect(copyright.license(ofFiles: "*/checkouts/\(package)/*") == expected, "\(package) in emojiart-sync.copyright")
        }
        #expect(copyright.license(ofFiles: "*") == "Apache-2.0")
    }

    /// The DEP-5 rules lintian checks and a reader relies on: the Format line, and every license a Files paragraph
    /// names defined once in a stand-alone License paragraph.
    @Test(arguments: ["emojiart-sync", "emojiart-gallery"])
    func eachCopyrightIsMachineReadable(package: String) throws {
        let copyright = try DebianCopyright(package)
        #expect(copyright.paragraphs.first?["Format"] == "https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
        let used = Set(copyright.paragraphs.filter { $0["Files"] != nil }.compactMap { $0["License"] })
        let defined = copyright.paragraphs.filter { $0["Files"] == nil && $0["Format"] == nil }.compactMap { $0["License"] }
        #expect(Set(defined) == used, "\(package): defined \(defined), used \(used)")
        #expect(defined.count == Set(defined).count, "\(package): a license defined twice")
    }

    /// One address for bugs: the package's Bugs field (contrib/deb/build-deb.sh), the README and the man page's
    /// REPORTING BUGS section.
    @Test func theBugAddressIsTheSameEverywhere() throws {
        let script = try String(contentsOfFile: RepositoryFiles.root + "/contrib/deb/build-deb.sh", encoding: .utf8)
        let line = try #require(script.split(separator: "\n").first { $0.hasPrefix("bugs=\"mailto:") }, "no Bugs address")
        let address = String(line.dropFirst("bugs=\"mailto:".count).dropLast())
        #expect(address.contains("@"))
        let readme = try String(contentsOfFile: RepositoryFiles.root + "/README.md", encoding: .utf8)
        #expect(readme.contains(address), "the README does not give \(address)")
        let roff = try String(contentsOfFile: RepositoryFiles.root + "/man/emojiart-sync.1", encoding: .utf8)
        let section = try #require(roff.components(separatedBy: "\n.SH ").first { $0.hasPrefix("REPORTING BUGS") })
        #expect(section.replacingOccurrences(of: "\\-", with: "-").contains(address), "\(section)")
    }
}

/// contrib/deb/PACKAGE.copyright read as DEP-5 paragraphs: each field's first line (continuations dropped).
private struct DebianCopyright {
    let paragraphs: [[String: String]]

    init(_ package: String) throws {
        let text = try String(contentsOfFile: RepositoryFiles.root + "/contrib/deb/\(package).copyright", encoding: .utf8)
        paragraphs = text.components(separatedBy: "\n\n").map { block in
            var fields: [String: String] = [:]
            for line in block.split(separator: "\n") where !line.hasPrefix(" ") {
                guard let colon = line.firstIndex(of: ":") else { continue }
                fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            return fields
        }
    }

    /// The license of the Files paragraph whose pattern is exactly `pattern`, or nil when none names it.
    func license(ofFiles pattern: String) -> String? {
        paragraphs.first { $0["Files"] == pattern }?["License"]
    }
}
