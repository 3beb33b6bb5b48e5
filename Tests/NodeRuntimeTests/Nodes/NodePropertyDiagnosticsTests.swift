import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A view property set to NaN or outside its domain keeps its defined fallback and is reported once per
/// node and property, saying what was set and what is used.
@MainActor
final class NodePropertyDiagnosticsTests: XCTestCase {
    private var time = 0.0
    private static let background = Color(rgb: 0x101418)

    private func node(_ name: String) -> Node {
        let node = Node()
        node.debugName = name
        return node
    }

    func testANaNOpacityIsReportedOnceAndDrawsNothing() async throws {
        let root = Node()
        let faded = node("faded-nan")
        faded.frame = Rect(x: 10, y: 10, width: 40, height: 40)
        faded.backgroundColor = Color(rgb: 0xE0483C)
        faded.opacity = .nan
        faded.opacity = .nan
        faded.opacity = 3
        root.addSubnode(faded)
        XCTAssertEqual(faded.diagnostics.count, 1, "one report per node and property: \(faded.diagnostics)")
        let diagnostic = try XCTUnwrap(faded.diagnostics.first)
        XCTAssertEqual(diagnostic.kind, .invalidProperty)
        XCTAssertEqual(diagnostic.subject, "Node 'faded-nan'")
        XCTAssertEqual(diagnostic.message, "opacity set to nan, outside 0...1; drawn at 0.0")
        XCTAssertTrue(faded.opacity.isNaN || faded.opacity == 3, "the value is kept as set")
        // The fallback: NaN opacity draws nothing (the last value set, 3, draws as 1).
        faded.opacity = .nan
        let pixels = try XCTUnwrap(OffscreenRender.render(root, size: Size(width: 60, height: 60),
                                                          clearColor: Self.background, time: &time))
        XCTAssertEqual(Color(premultipliedARGB: pixels.pixel(x: 30, y: 30)), Self.background)
    }

    func testAnOpacityOutsideZeroToOneIsReportedWithTheClampedValue() async {
        let bright = node("bright")
        bright.opacity = 1.5
        XCTAssertEqual(bright.diagnostics.map(\.message), ["opacity set to 1.5, outside 0...1; drawn at 1.0"])
        let negative = node("negative")
        negative.opacity = -0.25
        XCTAssertEqual(negative.diagnostics.map(\.message), ["opacity set to -0.25, outside 0...1; drawn at 0.0"])
    }

    func testABadFrameIsReportedWithWhatIsDrawn() async throws {
        let bad = node("bad-frame")
        bad.frame = Rect(x: .nan, y: 4, width: .infinity, height: -3)
        bad.frame = Rect(x: 1, y: 2, width: -1, height: 5)
        XCTAssertEqual(bad.diagnostics.count, 1)
        let message = try XCTUnwrap(bad.diagnostics.first?.message)
        XCTAssertEqual(message, "frame set to (nan, 4.0, inf×-3.0), which has a NaN, infinite, negative or out-of-range part; drawn as (0.0, 4.0, 0.0×0.0)")
        let far = node("far-frame")
        far.frame = Rect(x: 2e7, y: 0, width: 10, height: 10)
        XCTAssertEqual(far.diagnostics.first?.message,
                       "frame set to (20000000.0, 0.0, 10.0×10.0), which has a NaN, infinite, negative or out-of-range part; drawn as (10000000.0, 0.0, 10.0×10.0)")
    }

    func testABadCornerRadiusIsReportedAndDrawsSquareCorners() async throws {
        for (value, name) in [(Double.nan, "radius-nan"), (-4, "radius-negative"), (.infinity, "radius-infinite")] {
            let corner = node(name)
            corner.cornerRadius = value
            XCTAssertEqual(corner.diagnostics.map(\.message),
                           ["corner radius set to \(value), which is not a length; drawn with square corners (0)"])
        }
        // The fallback on screen: a square, its corner pixel filled.
        let root = Node()
        let square = node("radius-drawn")
        square.frame = Rect(x: 10, y: 10, width: 40, height: 40)
        square.backgroundColor = Color(rgb: 0x2D6CDF)
        square.cornerRadius = -.infinity
        root.addSubnode(square)
        let pixels = try XCTUnwrap(OffscreenRender.render(root, size: Size(width: 60, height: 60),
                                                          clearColor: Self.background, time: &time))
        XCTAssertEqual(Color(premultipliedARGB: pixels.pixel(x: 10, y: 10)), Color(rgb: 0x2D6CDF))
    }

    func testEachPropertyIsReportedOnceForEachNode() async {
        let nodes = [node("twin"), node("twin")]
        for node in nodes {
            node.opacity = .nan
            node.cornerRadius = .nan
            node.frame = Rect(x: 0, y: 0, width: .nan, height: 1)
            node.opacity = -1
            node.cornerRadius = -1
        }
        for node in nodes {
            XCTAssertEqual(node.diagnostics.map { String($0.message.prefix(12)) }, ["opacity set ", "corner radiu", "frame set to"])
        }
    }

    func testMeaningfulValuesReportNothing() async {
        let fine = node("fine")
        fine.frame = Rect(x: -50, y: -20, width: 0, height: 30)
        fine.opacity = 0
        fine.opacity = 1
        fine.cornerRadius = 1e6  // a capsule, as documented
        fine.cornerRadius = 0
        XCTAssertEqual(fine.diagnostics, [])
    }

    func testReportingFromManyThreadsKeepsOneReport() async {
        let shared = UncheckedSendableBox(node("threads"))
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            shared.value.opacity = .nan
        }
        XCTAssertEqual(shared.value.diagnostics.count, 1)
    }
}

/// Hands a node to `concurrentPerform`, whose iterations share it on purpose (node properties may be
/// set from any thread).
private final class UncheckedSendableBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
