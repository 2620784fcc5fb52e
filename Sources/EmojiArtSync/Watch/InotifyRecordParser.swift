#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Turns the bytes one `read(2)` of an inotify descriptor returned into ``WatchEvent``s.
///
/// The kernel writes whole variable-length records back to back: a fixed header
/// (`struct inotify_event`: `int wd; uint32_t mask, cookie, len;`) followed by `len` bytes of name,
/// NUL-terminated and NUL-padded (`len` is 0 for events without a name). The parser trusts nothing:
/// every field is read with `loadUnaligned`, a record whose header or name would run past the end
/// stops the parse, and a name ends at its first NUL or at `len`, whichever comes first.
///
/// A record that does not fit means the bytes were not what the kernel promises; what follows cannot
/// be trusted, so instead of guessing the parser appends a synthetic ``InotifyMask/queueOverflow``
/// event: the caller rescans, which is always a correct answer to "events may be missing".
enum InotifyRecordParser {
    /// Size of the fixed header, `sizeof(struct inotify_event)` (16 on Linux).
    static let headerSize = MemoryLayout<inotify_event>.size

    /// The events in `bytes`, in order.
    static func parse(_ bytes: UnsafeRawBufferPointer) -> [WatchEvent] {
        var events: [WatchEvent] = []
        // A typical record is a header plus a short padded name: reserve for that, not for the worst case.
        events.reserveCapacity(bytes.count / (headerSize + 16) + 1)
        var offset = 0
        while offset < bytes.count {
            guard bytes.count - offset >= headerSize else {
                events.append(malformed)
                break
            }
            let header = bytes.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
            let nameLength = Int(header.len)
            guard nameLength <= bytes.count - offset - headerSize else {
                events.append(malformed)
                break
            }
            let nameBytes = UnsafeRawBufferPointer(
                rebasing: bytes[(offset + headerSize)..<(offset + headerSize + nameLength)])
            events.append(
                WatchEvent(mask: InotifyMask(rawValue: header.mask), name: name(nameBytes), cookie: header.cookie))
            offset += headerSize + nameLength
        }
        return events
    }

    /// The name up to its first NUL; nil when there is none (`len == 0`, or only padding).
    private static func name(_ bytes: UnsafeRawBufferPointer) -> String? {
        let end = bytes.firstIndex(of: 0) ?? bytes.endIndex
        guard end > bytes.startIndex else { return nil }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[bytes.startIndex..<end]), as: UTF8.self)
    }

    /// What a truncated or inconsistent buffer turns into: "events were lost, rescan".
    static let malformed = WatchEvent(mask: .queueOverflow, name: nil, cookie: 0)
}
