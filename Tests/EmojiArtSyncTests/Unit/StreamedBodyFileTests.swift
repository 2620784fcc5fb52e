@testable import EmojiArtSync
import Foundation
import TestSupport
import Testing

/// A body goes to its temporary file through the write buffer; one that never outgrew the buffer is handed on
/// whole as well, so the miss checks it from memory instead of opening and reading the file again. Either way the
/// file holds exactly the bytes, and the digest is theirs.
@Suite struct StreamedBodyFileTests {
    private func stream(_ bytes: [UInt8], pieces: Int, into directory: String) throws -> StreamedBodyFile.Finished {
        let file = StreamedBodyFile(in: directory)
        let size = max(1, bytes.count / pieces)
        for start in stride(from: 0, to: bytes.count, by: size) {
            let ok = bytes[start..<min(start + size, bytes.count)].withUnsafeBytes { file.write($0) }
            #expect(ok)
        }
        return try file.finish()
    }

    @Test func aBodyThatFitsTheBufferIsHandedOnWholeAndWritten() throws {
        let dir = TemporaryDirectory("streamed-small")
        let bytes = (0..<1000).map { UInt8($0 % 251) }
        let finished = try stream(bytes, pieces: 7, into: dir.path)
        #expect(finished.bytes == bytes)
        #expect(readBytes(finished.path) == bytes)
        #expect(finished.sha256 == SHA256Digest.hex(of: bytes))
    }

    @Test func aLargerBodyIsCheckedFromItsFileNotHeldWhole() throws {
        let dir = TemporaryDirectory("streamed-large")
        let bytes = (0..<(StreamedBodyFile.bufferSize + 4097)).map { UInt8($0 % 253) }
        let finished = try stream(bytes, pieces: 9, into: dir.path)
        #expect(finished.bytes == nil)
        #expect(readBytes(finished.path) == bytes)
        #expect(finished.sha256 == SHA256Digest.hex(of: bytes))
    }
}
