#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// HTTP dates (RFC 9110 section 5.6.7) as whole seconds since the Unix epoch: written in the
/// IMF-fixdate form (`Sun, 06 Nov 1994 08:49:37 GMT`) and read in that form only (by hand:
/// glibc's `strptime` is not visible to Swift without `_XOPEN_SOURCE`).
///
/// Whole seconds because that is all an HTTP date can say; the obsolete RFC 850 and asctime
/// forms are not read (a date that does not parse makes `If-Modified-Since` be ignored, as RFC
/// 9110 section 13.1.3 asks).
enum HTTPDate {
    /// Seconds since the epoch now (`clock_gettime(CLOCK_REALTIME)`).
    static func now() -> Int {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Int(spec.tv_sec)
    }

    /// `seconds` as an IMF-fixdate (`gmtime_r`, `strftime`; the C locale, which a Swift program keeps).
    static func format(_ seconds: Int) -> String {
        var time = time_t(seconds)
        var parts = tm()
        gmtime_r(&time, &parts)
        var buffer = [CChar](repeating: 0, count: 64)
        let length = strftime(&buffer, buffer.count, "%a, %d %b %Y %H:%M:%S GMT", &parts)
        return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The seconds an IMF-fixdate names (`Sun, 06 Nov 1994 08:49:37 GMT`, exactly 29 bytes), or
    /// nil if `text` is not one. The weekday is not checked (it is redundant).
    static func parse(_ text: String) -> Int? {
        let bytes = Array(text.utf8)
        guard bytes.count == 29, bytes[3] == UInt8(ascii: ","), bytes[4] == 0x20, bytes[7] == 0x20, bytes[11] == 0x20,
            bytes[16] == 0x20, bytes[19] == UInt8(ascii: ":"), bytes[22] == UInt8(ascii: ":"),
            String(decoding: bytes[25...], as: UTF8.self) == " GMT",
            let day = number(bytes[5..<7]), let year = number(bytes[12..<16]), let hour = number(bytes[17..<19]),
            let minute = number(bytes[20..<22]), let second = number(bytes[23..<25]),
            let monthIndex = months.firstIndex(of: String(decoding: bytes[8..<11], as: UTF8.self)),
            (1...31).contains(day), hour < 24, minute < 60, second < 61
        else { return nil }
        return daysFromCivil(year: year, month: monthIndex + 1, day: day) * 86_400 + hour * 3600 + minute * 60 + second
    }

    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// The decimal number the ASCII digits spell, or nil if one is not a digit.
    private static func number(_ digits: ArraySlice<UInt8>) -> Int? {
        var value = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit) else { return nil }
            value = value * 10 + Int(digit - UInt8(ascii: "0"))
        }
        return value
    }

    /// Days from 1970-01-01 to the given proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
