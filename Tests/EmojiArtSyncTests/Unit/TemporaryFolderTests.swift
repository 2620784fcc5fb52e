@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A temporary file is made in the folder, by its path (see `TemporaryFolder` for why not through a descriptor).
@Suite struct TemporaryFolderTests {
    @Test func aNewTemporaryFileIsMadeInTheFolder() throws {
        let dir = TemporaryDirectory("temporary-folder-create")
        let (fd, path) = try DiskStorage.createTemporaryFile(in: TemporaryFolder(path: dir.path))
        close(fd)
        #expect(path.hasPrefix(dir.path + "/incoming-"))
        #expect(dir.names().count == 1 && FileManager.default.fileExists(atPath: path))
    }
}
