import Foundation
import TestSupport
import XCTest

/// Every public symbol of the library modules (Compositor, NodeRuntime, AccessibilityBridge) names
/// the thread it may be used on, in its own documentation or in its type's. The check reads the
/// sources: a public or open declaration passes when its doc comment, or the doc comment of the type
/// (or extended type) it is declared in, says which thread ("Thread:", "any thread", "UI thread",
/// "main thread", "thread only", "(main)").
@MainActor
final class ThreadNoteTests: XCTestCase {
    private static let threadNote = try! NSRegularExpression(
        pattern: #"Thread:|thread only|\(main\)|UI thread|any thread|main thread|## Threads"#, options: [.caseInsensitive])
    private static let declaration = try! NSRegularExpression(pattern:
        #"^(\s*)(?:@[\w()]+\s+)*(?:public|open)\s+(?:(?:static|final|override|nonisolated|mutating|private\(set\)|internal\(set\)|indirect|convenience|required|lazy|class)\s+)*(class|struct|enum|protocol|actor|func|var|let|init|subscript|case|typealias)\b\s*(\w*)"#)
    private static let extensionLine = try! NSRegularExpression(pattern: #"^(\s*)(?:public\s+)?extension\s+(\w+)"#)

    private func hasNote(_ doc: [String]) -> Bool {
        let text = doc.joined(separator: " ")
        return Self.threadNote.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil
    }

    private func groups(_ regex: NSRegularExpression, _ line: String) -> [String]? {
        guard let match = regex.firstMatch(in: line, range: NSRange(line.startIndex..., in: line)) else { return nil }
        return (0..<match.numberOfRanges).map { index in
            Range(match.range(at: index), in: line).map { String(line[$0]) } ?? ""
        }
    }

    private func sourceFiles() -> [URL] {
        var files: [URL] = []
        for module in ["Compositor", "NodeRuntime", "AccessibilityBridge"] {
            let root = GoldenImage.repositoryRoot.appendingPathComponent("Sources/\(module)")
            let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil)
            while let url = walker?.nextObject() as? URL {
                if url.pathExtension == "swift" { files.append(url) }
            }
        }
        return files
    }

    func testEveryPublicSymbolNamesItsThread() async throws {
        let files = sourceFiles()
        XCTAssertGreaterThan(files.count, 50, "the sources were found")
        let lines = try files.map { try String(contentsOf: $0, encoding: .utf8).components(separatedBy: "\n") }

        // Which types' own documentation names a thread (for all their members).
        var typeHasNote: [String: Bool] = [:]
        for fileLines in lines {
            var doc: [String] = []
            for line in fileLines {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("///") { doc.append(trimmed); continue }
                if let g = groups(Self.declaration, line), ["class", "struct", "enum", "protocol", "actor"].contains(g[2]) {
                    typeHasNote[g[3]] = (typeHasNote[g[3]] ?? false) || hasNote(doc)
                }
                if !trimmed.isEmpty && !trimmed.hasPrefix("@") { doc = [] }
            }
        }

        var missing: [String] = []
        for (file, fileLines) in zip(files, lines) {
            var doc: [String] = []
            var enclosing: [(indent: Int, name: String)] = []
            for (number, line) in fileLines.enumerated() {
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if trimmed.hasPrefix("///") { doc.append(trimmed); continue }
                let indent = line.prefix { $0 == " " }.count
                if trimmed.hasPrefix("}"), let last = enclosing.last, indent <= last.indent { enclosing.removeLast() }
                if let g = groups(Self.extensionLine, line) {
                    enclosing.append((g[1].count, g[2]))
                } else if let g = groups(Self.declaration, line) {
                    let kind = g[2], name = g[3]
                    let owner = enclosing.last { $0.indent < indent }?.name
                    let covered = hasNote(doc) || kind == "case" || owner.map { typeHasNote[$0] ?? false } == true
                    if ["class", "struct", "enum", "protocol", "actor"].contains(kind) { enclosing.append((indent, name)) }
                    if !covered {
                        missing.append("\(file.lastPathComponent):\(number + 1): \(kind) \(name)")
                    }
                }
                if !trimmed.isEmpty && !trimmed.hasPrefix("@") { doc = [] }
            }
        }
        XCTAssertEqual(missing, [], "public symbols whose documentation names no thread")
    }
}
