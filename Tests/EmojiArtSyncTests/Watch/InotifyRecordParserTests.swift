@testable import EmojiArtSync
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension WatchTests {
    /// The parser on hand-made buffers laid out like the kernel's, including broken ones the kernel
    /// never writes: it must not read past the end, and must say "rescan" instead of guessing.
    @Suite("InotifyRecordParser")
    struct RecordParser {
        /// `struct inotify_event`'s fixed part (`int wd; uint32_t mask, cookie, len;`) in native byte order.
        static func header(wd: Int32 = 1, mask: InotifyMask, cookie: UInt32 = 0, len: UInt32) -> [UInt8] {
            let bytes = withUnsafeBytes(of: wd) { Array($0) } + withUnsafeBytes(of: mask.rawValue) { Array($0) }
                + withUnsafeBytes(of: cookie) { Array($0) } + withUnsafeBytes(of: len) { Array($0) }
            precondition(bytes.count == MemoryLayout<inotify_event>.size)
            return bytes
        }

        /// One record: the header, then the name NUL-terminated and NUL-padded to a multiple of `padTo`.
        static func record(mask: InotifyMask, cookie: UInt32 = 0, name: String? = nil, padTo: Int = 16) -> [UInt8] {
            var nameBytes: [UInt8] = name.map { Array($0.utf8) + [0] } ?? []
            while !nameBytes.isEmpty && nameBytes.count % padTo != 0 { nameBytes.append(0) }
            return header(mask: mask, cookie: cookie, len: UInt32(nameBytes.count)) + nameBytes
        }

        static func parse(_ bytes: [UInt8]) -> [WatchEvent] {
            bytes.withUnsafeBytes { InotifyRecordParser.parse($0) }
        }

        @Test("records with and without names, in order")
        func wellFormed() {
            let bytes = Self.record(mask: .create, name: "a.png")
                + Self.record(mask: .movedFrom, cookie: 42, name: "a-much-longer-name-than-sixteen.png")
                + Self.record(mask: [.deleteSelf])
                + Self.record(mask: .ignored)
            #expect(Self.parse(bytes) == [
                WatchEvent(mask: .create, name: "a.png"),
                WatchEvent(mask: .movedFrom, name: "a-much-longer-name-than-sixteen.png", cookie: 42),
                WatchEvent(mask: .deleteSelf, name: nil),
                WatchEvent(mask: .ignored, name: nil),
            ])
        }

        @Test("a name filling len without a NUL ends at len")
        func nameWithoutTerminator() {
            let bytes = Self.header(mask: .delete, len: 4) + Array("abcd".utf8)
            #expect(Self.parse(bytes) == [WatchEvent(mask: .delete, name: "abcd")])
        }

        @Test("an empty buffer has no events")
        func empty() {
            #expect(Self.parse([]).isEmpty)
        }

        @Test("a header cut short: the events before it, then an overflow")
        func truncatedHeader() {
            let bytes = Self.record(mask: .create, name: "a") + Self.record(mask: .delete, name: "b").prefix(10)
            #expect(Self.parse(bytes) == [
                WatchEvent(mask: .create, name: "a"),
                WatchEvent(mask: .queueOverflow, name: nil),
            ])
        }

        @Test("len running past the end: the events before it, then an overflow", arguments: [1, 15, 16, 4096, Int(UInt32.max)])
        func lengthPastEnd(len: Int) {
            // The name area is shorter than len says (or empty).
            let tail = Self.header(mask: .delete, len: UInt32(len))
                + Array(repeating: UInt8(ascii: "x"), count: min(len - 1, 64))
            let bytes = Self.record(mask: .attrib, name: "ok") + tail
            let events = Self.parse(bytes)
            #expect(events == [WatchEvent(mask: .attrib, name: "ok"), WatchEvent(mask: .queueOverflow, name: nil)])
        }

        @Test("the kernel's own overflow record: no name, queueOverflow")
        func overflowRecord() {
            let bytes = Self.header(wd: -1, mask: .queueOverflow, len: 0)
            let events = Self.parse(bytes)
            #expect(events == [WatchEvent(mask: .queueOverflow, name: nil)])
            #expect(events.first?.isOverflow == true)
            #expect(events.first?.endsWatch == false, "an overflow is not the end of the watch")
        }
    }

    /// The C bit values behind the English names, checked against `<sys/inotify.h>`'s numbers.
    @Suite("InotifyMask")
    struct Mask {
        @Test("the watch mask is the documented set of bits")
        func watchMask() {
            // IN_MODIFY 0x2, IN_ATTRIB 0x4, IN_CLOSE_WRITE 0x8, IN_MOVED_FROM 0x40, IN_MOVED_TO 0x80,
            // IN_CREATE 0x100, IN_DELETE 0x200, IN_DELETE_SELF 0x400, IN_MOVE_SELF 0x800,
            // IN_ONLYDIR 0x01000000, IN_EXCL_UNLINK 0x04000000.
            #expect(DirectoryWatcher.watchMask.rawValue == 0x0500_0FCE)
        }

        @Test("kernel-only bits", arguments: [
            (InotifyMask.unmount, UInt32(0x2000)), (.queueOverflow, 0x4000), (.ignored, 0x8000), (.isDirectory, 0x4000_0000),
        ])
        func kernelBits(mask: InotifyMask, value: UInt32) {
            #expect(mask.rawValue == value)
        }

        @Test("description names the bits and shows unknown ones in hex")
        func description() {
            #expect(InotifyMask([.create, .isDirectory]).description == "[create, isDirectory]")
            #expect(InotifyMask(rawValue: 0x100 | 0x1000).description == "[create, 0x1000]")
            #expect(WatchEvent(mask: .movedTo, name: "b.png", cookie: 7).description == "[movedTo] name=b.png cookie=7")
        }
    }
}
