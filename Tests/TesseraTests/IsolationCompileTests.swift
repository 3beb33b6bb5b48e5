import Foundation
import TestSupport
import XCTest

/// The first line of the threading rules is the compiler's: UI-thread API is isolated to the main
/// actor, so calling it from a detached task does not compile, while what the documentation allows
/// on any thread (node properties, `setNeedsDisplay`, `setNeedsLayout`, measuring) compiles from any
/// isolation without a wrapper, because nodes are `Sendable`. Each snippet is type-checked against
/// the modules this test run was built with, as an app's code would be.
@MainActor
final class IsolationCompileTests: XCTestCase {
    /// The folder of the build products (the test runner sits beside them).
    private var products: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// Type-checks `source` as Swift 6 code that imports Tessera; returns the compiler's status and output.
    /// `pkg-config --cflags-only-I package`, split; empty when pkg-config is not installed.
    private static func pkgConfigIncludes(_ package: String) throws -> [String] {
        guard let pkgConfig = ["/usr/bin/pkg-config", "/usr/local/bin/pkg-config"].first(where: {
            FileManager.default.isExecutableFile(atPath: $0)
        }) else { return [] }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: pkgConfig)
        process.arguments = ["--cflags-only-I", package]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace).map(String.init)
    }

    private func typecheck(_ source: String) throws -> (status: Int32, output: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-isolation-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("snippet.swift")
        try source.write(to: file, atomically: true, encoding: .utf8)
        var arguments = ["-typecheck", "-swift-version", "6", file.path, "-I", products.appendingPathComponent("Modules").path]
        // The C modules the Tessera modules were built over, as SwiftPM passes them to a client.
        let sources = GoldenImage.repositoryRoot.appendingPathComponent("Sources")
        for name in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let map = sources.appendingPathComponent(name).appendingPathComponent("module.modulemap")
            if FileManager.default.fileExists(atPath: map.path) { arguments += ["-Xcc", "-fmodule-map-file=\(map.path)"] }
        }
        for built in try FileManager.default.contentsOfDirectory(atPath: products.path) where built.hasSuffix(".build") {
            let map = products.appendingPathComponent(built).appendingPathComponent("module.modulemap")
            if FileManager.default.fileExists(atPath: map.path) { arguments += ["-Xcc", "-fmodule-map-file=\(map.path)"] }
        }
        // Headers outside the default include path, from pkg-config as SwiftPM takes them (CDBus's).
        for flag in try Self.pkgConfigIncludes("dbus-1") { arguments += ["-Xcc", flag] }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swiftc"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    func testUIThreadAPIFromADetachedTaskDoesNotCompile() async throws {
        let (status, output) = try typecheck("""
            import Tessera
            func showLater(_ host: NodeHost, _ node: Node) {
                Task.detached {
                    host.setRootNode(node)
                }
            }
            """)
        XCTAssertNotEqual(status, 0, "compiled, but NodeHost.setRootNode is UI-thread only:\n\(output)")
        XCTAssertTrue(output.contains("main actor-isolated instance method 'setRootNode' cannot be called from outside of the actor"),
                      output)
    }

    func testALayerFromAWorkerThreadDoesNotCompile() async throws {
        let (status, output) = try typecheck("""
            import Foundation
            import Tessera
            func load(_ node: Node) {
                Thread.detachNewThread { _ = node.layer }
            }
            """)
        XCTAssertNotEqual(status, 0, output)
        XCTAssertTrue(output.contains("main actor-isolated property 'layer'"), output)
    }

    func testWhatAnyThreadMayDoCompilesFromAnyIsolation() async throws {
        let (status, output) = try typecheck("""
            import Foundation
            import Tessera
            final class CardNode: Node, @unchecked Sendable {}
            func configure(_ node: CardNode, list: ListNode) {
                Task.detached {
                    node.backgroundColor = Color(rgb: 0xFFFFFF)
                    node.cornerRadius = 8
                    node.setNeedsDisplay()
                    node.setNeedsLayout()
                    _ = node.layoutThatFits(.exactly(Size(width: 100, height: 40)))
                    list.addSubnode(node)
                }
                Thread.detachNewThread { node.opacity = 0.5 }
            }
            @MainActor func show(_ node: Node, in host: NodeHost) { host.setRootNode(node) }
            """)
        XCTAssertEqual(status, 0, output)
    }
}
