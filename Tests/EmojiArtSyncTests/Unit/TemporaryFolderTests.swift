@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Temporary files are made and moved relative to `tmp/`'s descriptor; anything that is not a file of the folder
/// still goes by its path.
@Suite struct TemporaryFolderTests {
    @Test func aFileOfTheFolderIsNamedRelativeToItsDescriptorAnythingElseByPath() throws {
        let dir = TemporaryDirectory("temporary-folder")
        let folder = TemporaryFolder(path: dir.path)
        #expect(folder.descriptor >= 0)
        let inside = folder.location(of: dir.path + "/incoming-1")
        #expect(inside.directory == folder.descriptor && inside.name == "incoming-1")
        for elsewhere in [dir.path + "/sub/incoming-1", dir.path + "x/incoming-1", dir.path + "/", "/elsewhere/incoming-1"] {
            let location = folder.location(of: elsewhere)
            #expect(location.directory == AT_FDCWD && location.name == elsewhere, "\(elsewhere)")
        }
    }

    @Test func aNewTemporaryFileIsMadeInTheFolder() throws {
        let dir = TemporaryDirectory("temporary-folder-create")
        let (fd, path) = try DiskStorage.createTemporaryFile(in: TemporaryFolder(path: dir.path))
        close(fd)
        #expect(path.hasPrefix(dir.path + "/incoming-"))
        #expect(dir.names().count == 1 && FileManager.default.fileExists(atPath: path))
    }

    @Test func withoutADescriptorEverythingGoesByPath() throws {
        let folder = TemporaryFolder(path: "/nonexistent-\(getpid())/tmp")
        #expect(folder.descriptor < 0)
        #expect(folder.location(of: folder.path + "/incoming-1").directory == AT_FDCWD)
    }
}
