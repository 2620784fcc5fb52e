import Foundation
import TestSupport
import Testing

/// `make install` puts binaries, man pages, completions and units where a Linux system looks for them, under
/// DESTDIR; `make uninstall` takes exactly those away again.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct InstallTests {
    /// `make` builds the two programs and nothing else: a bare `swift build` also built the tests' support
    /// library, which a release build with the Swift runtime linked in cannot compile (no `Testing` module), so
    /// `make` and `make install` on a fresh clone failed. And it builds them in a directory of its own: install
    /// used .build/release, where a plain `swift build -c release` leaves binaries that load the Swift runtime
    /// from the toolchain, and installed those. (The full release build takes minutes: this reads the commands
    /// `make -n` would run, for `make` and for an install whose build directory holds no binaries.)
    @Test func makeBuildsOnlyTheProgramsInABuildDirectoryOfTheirOwn() throws {
        let make = try #require(RepositoryFiles.tool("make"), "make is not installed")
        let empty = TemporaryDirectory("no-binaries")
        for arguments in [["-n", "all"], ["-n", "install", "SCRATCH=\(empty.path)/scratch", "DESTDIR=\(empty.path)/root"]] {
            let dryRun = try RepositoryFiles.run(make, arguments)
            let builds = dryRun.output.split(separator: "\n").filter { $0.contains("swift build") }
            #expect(!builds.isEmpty, "\(arguments): \(dryRun.output)")
            for line in builds {
                #expect(line.contains("--product"), "\(arguments) builds every target: \(line)")
                #expect(line.contains("--scratch-path"), "\(arguments) builds into .build, beside plain builds: \(line)")
                #expect(line.contains("--static-swift-stdlib"), "\(line)")
            }
        }
    }

    /// A binary that loads the Swift runtime from the toolchain (this test build's: a RUNPATH into it) is refused
    /// by name and nothing is installed; before, `make install` copied whatever BUILD_DIR held, and the installed
    /// agent failed with `error while loading shared libraries: libswiftCore.so` once the toolchain was gone.
    @Test func installRefusesABinaryThatNeedsTheToolchain() throws {
        let make = try #require(RepositoryFiles.tool("make"), "make is not installed")
        let destination = TemporaryDirectory("install-refused")
        let install = try RepositoryFiles.run(
            make, ["install", "DESTDIR=\(destination.path)", "PREFIX=/usr", "BUILD_DIR=\(RepositoryFiles.buildDirectory)"])
        #expect(install.status != 0)
        #expect(install.output.contains("emojiart-sync needs the Swift toolchain at run time"), "\(install.output)")
        #expect(install.output.contains("ALLOW_TOOLCHAIN_BUILD=1"), "\(install.output)")
        #expect(files(under: destination.path).isEmpty, "installed anyway: \(files(under: destination.path))")
    }

    /// The user's package is the agent alone: `install-agent` puts no gallery anywhere, `install-gallery` nothing
    /// of the agent. (Before, one install put the 60 MB test server in /usr/bin beside the agent.)
    @Test func theAgentAndTheGalleryInstallApart() throws {
        let make = try #require(RepositoryFiles.tool("make"), "make is not installed")
        for (target, name, other) in [("install-agent", "emojiart-sync", "emojiart-gallery"), ("install-gallery", "emojiart-gallery", "emojiart-sync")] {
            let destination = TemporaryDirectory(target)
            let install = try RepositoryFiles.run(make, [target] + Self.developmentInstall(destination.path))
            #expect(install.status == 0, "\(install.output)")
            let landed = files(under: destination.path)
            #expect(landed.contains("usr/bin/\(name)") && landed.contains("usr/share/man/man1/\(name).1"), "\(landed)")
            #expect(!landed.contains { $0.contains(other) }, "\(target) installed \(other)'s files: \(landed)")
        }
    }

    /// Debian's zsh reads completions from /usr/share/zsh/vendor-completions, never /usr/share/zsh/site-functions,
    /// where `make install PREFIX=/usr` put them; /usr/local keeps site-functions, which zsh reads there.
    @Test func zshFindsTheCompletionOfAUsrInstall() throws {
        let make = try #require(RepositoryFiles.tool("make"), "make is not installed")
        for (prefix, directory) in [("/usr", "usr/share/zsh/vendor-completions"), ("/usr/local", "usr/local/share/zsh/site-functions")] {
            let destination = TemporaryDirectory("install-zsh")
            let install = try RepositoryFiles.run(make, ["install-agent", "DESTDIR=\(destination.path)", "PREFIX=\(prefix)",
                                                         "BUILD_DIR=\(RepositoryFiles.buildDirectory)", "ALLOW_TOOLCHAIN_BUILD=1"])
            #expect(install.status == 0, "\(install.output)")
            #expect(files(under: destination.path).contains("\(directory)/_emojiart-sync"), "\(prefix): \(files(under: destination.path))")
            if let zsh = RepositoryFiles.tool("zsh") {
                let fpath = try RepositoryFiles.run(zsh, ["-fc", "print -l $fpath"])
                #expect(fpath.output.split(separator: "\n").contains(Substring("/" + directory)), "\(fpath.output)")
            }
        }
    }

    /// `make install` into DESTDIR with PREFIX=/usr from this test build (a debug build, which needs the toolchain:
    /// allowed for this install only).
    private static func developmentInstall(_ destination: String) -> [String] {
        ["DESTDIR=\(destination)", "PREFIX=/usr", "BUILD_DIR=\(RepositoryFiles.buildDirectory)", "ALLOW_TOOLCHAIN_BUILD=1"]
    }

    /// A build older than its sources (made before a `git pull` or an edit, `make` not run since) is refused by
    /// name, naming a newer source, and nothing is installed; `ALLOW_STALE_BUILD=1` installs it anyway. Before,
    /// `make install` alone installed whatever the build directory held, silently.
    @Test func installRefusesABuildOlderThanItsSources() throws {
        let make = try #require(RepositoryFiles.tool("make"), "make is not installed")
        let build = TemporaryDirectory("stale-build")
        let longAgo = Date(timeIntervalSince1970: 946_684_800)  // 2000-01-01, older than any checkout
        for program in ["emojiart-sync", "emojiart-gallery"] {
            try FileManager.default.copyItem(atPath: RepositoryFiles.buildDirectory + "/" + program, toPath: build.file(program))
            try FileManager.default.setAttributes([.modificationDate: longAgo], ofItemAtPath: build.file(program))
        }
        let destination = TemporaryDirectory("install-stale")
        let variables = ["DESTDIR=\(destination.path)", "PREFIX=/usr", "BUILD_DIR=\(build.path)", "ALLOW_TOOLCHAIN_BUILD=1"]
        let refused = try RepositoryFiles.run(make, ["install-agent"] + variables)
        #expect(refused.status != 0)
        #expect(refused.output.contains("emojiart-sync is older than its sources"), "\(refused.output)")
        #expect(refused.output.contains("Sources/"), "names no source: \(refused.output)")
        #expect(refused.output.contains("ALLOW_STALE_BUILD=1"), "\(refused.output)")
        #expect(files(under: destination.path).isEmpty, "installed anyway: \(files(under: destination.path))")

        let allowed = try RepositoryFiles.run(make, ["install-agent", "ALLOW_STALE_BUILD=1"] + variables)
        #expect(allowed.status == 0, "\(allowed.output)")
        #expect(FileManager.default.isExecutableFile(atPath: destination.file("usr/bin/emojiart-sync")))
    }

    @Test func installLandsEverythingAndUninstallRemovesIt() throws {
        let make = try #require(RepositoryFiles.tool("make"), "make is not installed")
        let destination = TemporaryDirectory("install")
        let variables = Self.developmentInstall(destination.path)
        let install = try RepositoryFiles.run(make, ["install"] + variables)
        #expect(install.status == 0, "\(install.output)")

        let expected = [
            "usr/bin/emojiart-gallery", "usr/bin/emojiart-sync",
            "usr/lib/systemd/user/emojiart-sync.service",
            "usr/share/bash-completion/completions/emojiart-sync",
            "usr/share/fish/vendor_completions.d/emojiart-sync.fish",
            "usr/share/man/man1/emojiart-gallery.1", "usr/share/man/man1/emojiart-sync.1",
            "usr/share/zsh/vendor-completions/_emojiart-sync",
        ]
        let landed = files(under: destination.path)
        for path in expected {
            #expect(landed.contains(path), "\(path) not installed; landed: \(landed)")
        }
        let units = try FileManager.default.contentsOfDirectory(atPath: RepositoryFiles.root + "/contrib/systemd")
            .filter { $0.hasSuffix(".service") || $0.hasSuffix(".socket") || $0.hasSuffix(".timer") }
        #expect(landed.count == expected.count - 1 + units.count, "\(landed)")
        #expect(FileManager.default.isExecutableFile(atPath: destination.file("usr/bin/emojiart-sync")))
        let unit = try String(contentsOfFile: destination.file("usr/lib/systemd/user/emojiart-sync.service"), encoding: .utf8)
        #expect(unit.contains("\nExecStart=/usr/bin/emojiart-sync\n"), "\(unit)")
        let bash = try String(contentsOfFile: destination.file("usr/share/bash-completion/completions/emojiart-sync"), encoding: .utf8)
        #expect(bash.contains("--max-delete") && bash.contains("purge"))

        let uninstall = try RepositoryFiles.run(make, ["uninstall"] + variables)
        #expect(uninstall.status == 0, "\(uninstall.output)")
        #expect(files(under: destination.path).isEmpty, "left behind: \(files(under: destination.path))")
    }

    /// Before: `make install PREFIX=$HOME/.local` put the units in ~/.local/lib/systemd/user, which
    /// `systemctl --user` does not read.
    @Test func aHomePrefixPutsTheUnitsWhereSystemctlUserReadsThem() throws {
        let make = try #require(RepositoryFiles.tool("make"), "make is not installed")
        let home = TemporaryDirectory("install-home")
        let variables = ["PREFIX=\(home.path)/.local", "BUILD_DIR=\(RepositoryFiles.buildDirectory)", "ALLOW_TOOLCHAIN_BUILD=1"]
        // As the user whose home this is: install checks that systemd reads the unit directory it chose.
        let asUser = ["-u", "XDG_DATA_HOME", "HOME=\(home.path)", make]
        let install = try RepositoryFiles.run("/usr/bin/env", asUser + ["install"] + variables)
        #expect(install.status == 0, "\(install.output)")
        let unitDirectory = home.path + "/.local/share/systemd/user"
        let unit = try String(contentsOfFile: unitDirectory + "/emojiart-sync.service", encoding: .utf8)
        // Named from %h as in contrib/systemd: the installed unit is the contrib one.
        #expect(unit.contains("\nExecStart=%h/.local/bin/emojiart-sync\n"), "\(unit)")
        let contrib = try String(contentsOfFile: RepositoryFiles.root + "/contrib/systemd/emojiart-sync.service", encoding: .utf8)
        #expect(unit == contrib)
        #expect(!install.output.contains("does not read"), "\(install.output)")
        if let analyze = RepositoryFiles.tool("systemd-analyze") {
            // What systemd itself computes for a user whose home this is.
            let paths = try RepositoryFiles.run("/usr/bin/env", ["-u", "XDG_DATA_HOME", "HOME=\(home.path)", analyze, "--user", "unit-paths"])
            #expect(paths.output.split(separator: "\n").contains(Substring(unitDirectory)), "\(paths.output)")
        }
        let bash = try String(contentsOfFile: home.file(".local/share/bash-completion/completions/emojiart-sync"), encoding: .utf8)
        #expect(!bash.hasPrefix("#!"), "a sourced completion script has no #! line")
        let uninstall = try RepositoryFiles.run("/usr/bin/env", asUser + ["uninstall"] + variables)
        #expect(uninstall.status == 0 && files(under: home.path).isEmpty, "left behind: \(files(under: home.path))")
    }

    /// Regular files under `root`, relative to it, sorted.
    private func files(under root: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var found: [String] = []
        while let path = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: root + "/" + path, isDirectory: &isDirectory), !isDirectory.boolValue {
                found.append(path)
            }
        }
        return found.sorted()
    }
}
