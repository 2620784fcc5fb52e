@testable import EmojiArtSync
import Foundation
import Testing

/// The agent's own number and text layouts print what printf would: `String(format:)` (full Foundation, which
/// the tests may link) is the oracle.
struct PlainTextTests {
    @Test(arguments: [0.0, 0.04, 0.05, 0.25, 0.95, 0.96, 1.0, 2.25, 9.949, 9.95, 99.99, 123.456, 1023.95, 1e9 + 0.5, -2.5, -7.25])
    func fixedMatchesPrintf(_ value: Double) {
        for digits in 0...2 {
            let printf = String(format: "%.\(digits)f", value)
            // printf rounds the exact binary value; the agent rounds the scaled one, which can land on a half that
            // the binary value was not (0.95 is 0.9499...): only such halves may differ, by one in the last digit.
            let scaled = abs(value) * pow(10, Double(digits))
            if scaled - scaled.rounded(.down) == 0.5 { continue }
            #expect(PlainText.fixed(value, digits: digits) == printf, "\(value) with \(digits) digits")
        }
    }

    @Test func fixedNamesWhatIsNotANumber() {
        #expect(PlainText.fixed(.nan, digits: 1) == "nan")
        #expect(PlainText.fixed(.infinity, digits: 1) == "inf")
        #expect(PlainText.fixed(-.infinity, digits: 1) == "-inf")
        #expect(PlainText.fixed(-0.01, digits: 1) == String(format: "%.1f", 0.0))
    }

    @Test func zeroPaddedPaddedAndTrimmed() {
        #expect(PlainText.zeroPadded(7, width: 2) == "07")
        #expect(PlainText.zeroPadded(2026, width: 2) == "2026")
        #expect(PlainText.zeroPadded(-5, width: 3) == String(format: "%03d", -5))
        #expect(PlainText.padded("key:", to: 7) == "key:   ")
        #expect(PlainText.padded("a longer key:", to: 4) == "a longer key:")
        #expect(PlainText.trimmed(" \t value = 3 \r\n") == "value = 3")
        #expect(PlainText.trimmed("  \t ") == "")
        #expect(PlainText.trimmed("x") == "x")
    }

    @Test func byteCountsAndDurationsReadAsBefore() {
        #expect(ByteCount.format(67_108_864) == "64.0 MiB")
        #expect(ByteCount.format(1_536) == "1.5 KiB")
        #expect(ByteCount.format(512) == "512 B")
        #expect(Duration.milliseconds(4_250).secondsText == "4.2s" || Duration.milliseconds(4_250).secondsText == "4.3s")
        #expect(Duration.milliseconds(4_260).secondsText == "4.3s")
    }
}
