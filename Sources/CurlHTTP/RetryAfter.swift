#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A server's `Retry-After` (RFC 9110 section 10.2.3): how long it asked the client to wait before it asks
/// again, read from either form the field may take, delay-seconds (`120`) or an HTTP-date
/// (`Fri, 31 Dec 1999 23:59:59 GMT`, or the obsolete RFC 850 and asctime forms a recipient must accept too,
/// section 5.6.7).
///
/// Only the answers that carry it as "come back later" are read: `429 Too Many Requests` (RFC 6585) and
/// `503 Service Unavailable`; on a redirect it means something else and is ignored. A value that does not
/// parse counts as absent: the caller then keeps its own backoff.
public enum RetryAfter {
    /// The statuses whose `Retry-After` asks the client to wait.
    public static let statuses: Set<Int> = [429, 503]

    /// The wait `response` asks for, or nil: not a 429 or 503, no `Retry-After`, or one that does not parse.
    /// A date in the past asks for no wait (`.zero`). `now` is the wall clock in seconds since the epoch.
    static func wait(in response: HTTPResponse, now: Double = wallClockNow()) -> Duration? {
        guard statuses.contains(response.status), let value = response.headers["retry-after"] else { return nil }
        return wait(value, now: now)
    }

    /// The wait one field value asks for, or nil when it is neither form.
    public static func wait(_ value: String, now: Double = wallClockNow()) -> Duration? {
        let text = Substring(value.trimmingSpacesAndTabs())
        if let seconds = delaySeconds(text) { return .seconds(seconds) }
        guard let date = httpDate(text) else { return nil }
        return .milliseconds(Int64(max(0, (Double(date) - now) * 1000).rounded(.up)))
    }

    /// `1*DIGIT`, saturating at a day's worth of seconds times 365 (a longer value is as good as forever, and the
    /// caller caps it far below anyway).
    private static func delaySeconds(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
        var seconds: Int64 = 0
        for digit in text.utf8 {
            seconds = min(seconds * 10 + Int64(digit - UInt8(ascii: "0")), 365 * 86_400)
        }
        return seconds
    }

    /// Seconds since the epoch an HTTP-date names, in any of its three forms, or nil.
    ///
    /// - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`
    /// - RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT` (a two-digit year within 50 years from now, as RFC 9110 asks)
    /// - asctime: `Sun Nov  6 08:49:37 1994`
    static func httpDate(_ text: Substring) -> Int? {
        // Split on blanks, commas and dashes: every form becomes a list of words and numbers.
        let words = text.split { $0 == " " || $0 == "," || $0 == "-" }
        let day: Int?, month: Int?, year: Int?, time: Substring
        switch words.count {
        case 6 where words[5] == "GMT":  // IMF-fixdate and RFC 850: weekday day month year time GMT
            (day, month, year, time) = (Int(words[1]), monthNumber(words[2]), Int(words[3]), words[4])
        case 5:  // asctime: weekday month day time year
            (day, month, year, time) = (Int(words[2]), monthNumber(words[1]), Int(words[4]), words[3])
        default:
            return nil
        }
        let clock = time.split(separator: ":").map { Int($0) }
        guard var year, let month, let day, (1...31).contains(day), clock.count == 3,
            let hour = clock[0], let minute = clock[1], let second = clock[2], hour < 24, minute < 60, second < 61
        else { return nil }
        if year < 100 {
            // RFC 850's two-digit year: the century that puts it no more than 50 years in the future.
            let thisYear = currentYear()
            year += thisYear - thisYear % 100
            if year > thisYear + 50 { year -= 100 }
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        return seconds == -1 ? nil : Int(seconds)
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    private static func monthNumber(_ word: Substring) -> Int? {
        months.firstIndex(of: word.lowercased()).map { $0 + 1 }
    }

    private static func currentYear() -> Int {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        return Int(parts.tm_year) + 1900
    }

    /// The wall clock, in seconds since the epoch (`CLOCK_REALTIME`): what an HTTP-date is compared with.
    public static func wallClockNow() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
