import Foundation
import XCTest
@testable import NodeRuntime

/// The Unicode Character Database's own conformance files (Debian's `unicode-data`, installed by
/// `make test`), run through `UnicodeText`'s public API. Each test prints its pass count and every
/// failing case with its reason; a failure that is not one of the named differences between ICU and
/// the file fails the test, and so does a change in how many there are of each.
@MainActor
final class UnicodeConformanceTests: XCTestCase {
    private static let folder = "/usr/share/unicode"

    private func lines(_ name: String) throws -> [Substring] {
        let path = "\(Self.folder)/\(name)"
        guard let data = FileManager.default.contents(atPath: path) else {
            XCTFail("\(path) is missing: install the `unicode-data` package (make test-deps does)")
            return []
        }
        return String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: true)
    }

    private func scalars(_ hex: Substring) -> String {
        var string = ""
        for field in hex.split(separator: " ") { if let v = UInt32(field, radix: 16), let s = Unicode.Scalar(v) { string.unicodeScalars.append(s) } }
        return string
    }

    /// Prints the pass count and every failure. `known` sorts each failure into a named difference
    /// between ICU and the file (nil: not known); the test fails on an unknown failure and when a
    /// known difference's count changes, so a fix or a regression is noticed either way.
    private func report(_ name: String, passed: Int, failures: [String], minimumCases: Int = 500,
                        known: [String: Int] = [:], classify: (String) -> String? = { _ in nil },
                        file: StaticString = #filePath, line: UInt = #line) {
        let total = passed + failures.count
        print("Unicode conformance, \(name) (Unicode \(UnicodeText.unicodeVersion)): \(passed) of \(total) cases pass"
              + String(format: " (%.3f%%)", 100 * Double(passed) / Double(max(1, total))))
        var counts: [String: Int] = [:]
        for failure in failures {
            let reason = classify(failure)
            print("  fails (\(reason ?? "unknown")): \(failure.prefix(160))")
            if let reason { counts[reason, default: 0] += 1 } else { XCTFail("\(name): unexpected failure \(failure)", file: file, line: line) }
        }
        XCTAssertGreaterThan(total, minimumCases, "\(name): the file was read", file: file, line: line)
        XCTAssertEqual(counts, known, "\(name): the known differences changed", file: file, line: line)
    }

    /// "× 0023 ÷ 0020 ÷" lines: the text, and the offsets marked ÷ after the first scalar.
    private func breakCases(_ name: String) throws -> [(text: String, breaks: [Int], source: Substring)] {
        try lines(name).compactMap { line in
            let data = line.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false)[0]
            let tokens = data.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard tokens.count >= 3 else { return nil }
            var text = "", breaks: [Int] = [], count = 0
            for token in tokens.dropFirst() {
                if token == "÷" { breaks.append(count) } else if token == "×" { continue } else {
                    guard let v = UInt32(token, radix: 16), let s = Unicode.Scalar(v) else { return nil }
                    text.unicodeScalars.append(s)
                    count += 1
                }
            }
            return (text, breaks, line)
        }
    }

    func testLineBreakTest() async throws {
        var passed = 0, failures: [String] = []
        for c in try breakCases("auxiliary/LineBreakTest.txt") {
            let got = UnicodeText.lineBreakOffsets(in: c.text)
            if got == c.breaks { passed += 1 } else { failures.append("\(c.source.split(separator: "#")[0]) → \(got)") }
        }
        report("LineBreakTest.txt", passed: passed, failures: failures, minimumCases: 7000)
    }

    /// The three places where ICU's line rules run ahead of the Unicode version its data carries, each
    /// put back to that version's rules (UAX #14 15.0), in text a chat shows.
    func testLineBreaksFollowTheDataVersionAroundHyphensAndNumbers() async {
        // A word-initial hyphen before letters: a break after it (15.0 has no LB20a).
        XCTAssertEqual(UnicodeText.lineBreakOffsets(in: "-abc"), [1, 4])
        // A full stop starting a number after a space stays with the space (LB13 × IS) and breaks
        // before its digits (no number precedes it: LB25 does not apply).
        XCTAssertEqual(UnicodeText.lineBreakOffsets(in: "is .5"), [4, 5])
        // Inside a number nothing changes: 1.5 and 3,000 stay whole.
        XCTAssertEqual(UnicodeText.lineBreakOffsets(in: "v 1.5 3,000"), [2, 6, 11])
        // A hyphen between words still breaks after itself; before digits it keeps them (LB25 HY × NU).
        XCTAssertEqual(UnicodeText.lineBreakOffsets(in: "well-known -5"), [5, 11, 13])
    }

    func testGraphemeBreakTest() async throws {
        var passed = 0, failures: [String] = []
        for c in try breakCases("auxiliary/GraphemeBreakTest.txt") {
            let got = UnicodeText.graphemeBreakOffsets(in: c.text)
            if got == c.breaks { passed += 1 } else { failures.append("\(c.source.prefix(120)) → \(got)") }
        }
        report("GraphemeBreakTest.txt", passed: passed, failures: failures)
    }

    func testBidiCharacterTest() async throws {
        var passed = 0, failures: [String] = []
        for line in try lines("BidiCharacterTest.txt") where !line.hasPrefix("#") {
            let fields = line.split(separator: ";", omittingEmptySubsequences: false)
            guard fields.count >= 5 else { continue }
            let text = scalars(fields[0])
            let direction: UnicodeText.ParagraphDirection = fields[1] == "0" ? .leftToRight : fields[1] == "1" ? .rightToLeft : .auto
            let levels = fields[3].split(separator: " ").map { Int($0) }
            let order = fields[4].split(separator: " ").compactMap { Int($0) }
            let got = UnicodeText.bidi(text, paragraph: direction)
            if got.paragraphLevel == Int(fields[2]) && got.levels == levels && got.visualOrder == order {
                passed += 1
            } else {
                failures.append("\(line) → level \(got.paragraphLevel), \(got.levels.map { $0.map(String.init) ?? "x" }), \(got.visualOrder)")
            }
        }
        // Where ICU's bidi differs from the file: a non-spacing mark after a bracket (UBA 8.0 gives it
        // the bracket's resolved type, also across a boundary neutral), bracket pairs or isolates that
        // embedding controls split (ICU pairs brackets across the removed controls and resolves an
        // isolate inside an override differently), and more than 63 nested bracket pairs (BD16's stack
        // limit, which ICU does not apply).
        report("BidiCharacterTest.txt", passed: passed, failures: failures, minimumCases: 90_000,
               known: ["non-spacing mark after a bracket": 9, "brackets or isolates split by embedding controls": 20,
                       "over 63 nested bracket pairs": 1]) { failure in
            let input = failure.split(separator: ";")[0]
            if input.split(separator: " ").filter({ $0 == "0028" }).count > 63 { return "over 63 nested bracket pairs" }
            if ["0331", "0333", "20D6"].contains(where: { input.contains($0) }) { return "non-spacing mark after a bracket" }
            let embeds = ["202A", "202B", "202C", "202D", "202E"].contains(where: { input.contains($0) })
            let pairs = ["0028", "005B", "2066", "2067", "2068"].contains(where: { input.contains($0) })
            return embeds && pairs ? "brackets or isolates split by embedding controls" : nil
        }
    }

    /// BidiTest.txt states inputs as bidi classes; each class is played by one character of it.
    func testBidiTest() async throws {
        let representative: [Substring: UInt32] = [
            "L": 0x41, "R": 0x5D0, "AL": 0x627, "EN": 0x30, "ES": 0x2B, "ET": 0x23, "AN": 0x660, "CS": 0x2C,
            "NSM": 0x300, "BN": 0xAD, "B": 0x2029, "S": 0x09, "WS": 0x20, "ON": 0x21, "LRE": 0x202A, "LRO": 0x202D,
            "RLE": 0x202B, "RLO": 0x202E, "PDF": 0x202C, "LRI": 0x2066, "RLI": 0x2067, "FSI": 0x2068, "PDI": 0x2069,
        ]
        var passed = 0, failures: [String] = []
        var levels: [Int?] = [], order: [Int] = []
        for line in try lines("BidiTest.txt") where !line.hasPrefix("#") {
            if line.hasPrefix("@Levels:") {
                levels = line.dropFirst(8).split(whereSeparator: { $0 == " " || $0 == "\t" }).map { Int($0) }
                continue
            }
            if line.hasPrefix("@Reorder:") {
                order = line.dropFirst(9).split(whereSeparator: { $0 == " " || $0 == "\t" }).compactMap { Int($0) }
                continue
            }
            if line.hasPrefix("@") { continue }
            let fields = line.split(separator: ";")
            guard fields.count == 2, let bits = Int(fields[1].trimmingCharacters(in: .whitespaces)) else { continue }
            var text = ""
            for name in fields[0].split(separator: " ") { text.unicodeScalars.append(Unicode.Scalar(representative[name]!)!) }
            for (bit, direction) in [(1, UnicodeText.ParagraphDirection.auto), (2, .leftToRight), (4, .rightToLeft)] where bits & bit != 0 {
                let got = UnicodeText.bidi(text, paragraph: direction)
                if got.levels == levels && got.visualOrder == order {
                    passed += 1
                } else {
                    failures.append("\(fields[0]) \(direction) → \(got.levels.map { $0.map(String.init) ?? "x" }), \(got.visualOrder)")
                }
            }
        }
        report("BidiTest.txt", passed: passed, failures: failures, minimumCases: 700_000)
    }
}
