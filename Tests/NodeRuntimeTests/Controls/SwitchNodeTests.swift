import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A switch at the top left of a screen.
private final class SwitchScreenNode: Node, @unchecked Sendable {
    let toggle: SwitchNode
    init(_ toggle: SwitchNode) {
        self.toggle = toggle
        super.init()
        backgroundColor = Color(rgb: 0x202020)
        addSubnode(toggle)
    }
    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(alignItems: .start) { toggle }.inset(EdgeInsets(all: 10))
    }
}

/// Switches: flipped by a click or Space with `.valueChanged`, the thumb at the matching end in
/// pixels, set from another thread without an event, and left alone when disabled.
@MainActor
final class SwitchNodeTests: XCTestCase {
    private var time = 0.0

    private func show(_ toggle: SwitchNode) throws -> NodeHost {
        let host = try PixelOracle.makeHost(size: Size(width: 100, height: 50))
        host.setRootNode(SwitchScreenNode(toggle))
        try host.settle()
        return host
    }

    private func frame(_ host: NodeHost, _ events: [InputEvent] = []) {
        time += 1.0 / 60
        host.runFrame(time: time, events: events)
    }

    /// Settles with frames a quarter of a second apart, so the thumb's slide ends.
    private func settle(_ host: NodeHost) throws {
        _ = try host.settle(timeout: 10) {
            time += 0.25
            host.runFrame(time: time, events: [])
        }
    }

    private func colour(_ host: NodeHost, _ x: Int, _ y: Int) throws -> Color {
        Color(premultipliedARGB: try XCTUnwrap(OffscreenRender.capture(host)).pixel(x: x, y: y))
    }

    /// The switch spans x 10…54, y 10…34; its thumb is 20 points wide, at x 12…32 off, 32…52 on.
    private func assertThumb(_ host: NodeHost, on: Bool, _ toggle: SwitchNode, file: StaticString = #filePath, line: UInt = #line) throws {
        let (thumbX, trackX) = on ? (42, 20) : (22, 44)
        XCTAssertEqual(try colour(host, thumbX, 22), .white, "the thumb", file: file, line: line)
        XCTAssertEqual(try colour(host, trackX, 22), on ? toggle.onColor : toggle.offColor, "the track", file: file, line: line)
    }

    func testAClickFlipsItSlidesTheThumbAndSendsValueChanged() async throws {
        let toggle = SwitchNode()
        let host = try show(toggle)
        XCTAssertEqual(toggle.frame, Rect(x: 10, y: 10, width: 44, height: 24))
        try assertThumb(host, on: false, toggle)
        var events: [ControlEvents] = []
        toggle.addTarget(for: [.valueChanged, .primaryActionTriggered]) { control, happened in
            events.append(happened)
            XCTAssertTrue((control as? SwitchNode)?.isOn == true, "the value has changed when the targets hear of it")
        }
        frame(host, [.pointerDown(Point(x: 30, y: 22), button: 1)])
        frame(host, [.pointerUp(Point(x: 30, y: 22), button: 1)])
        XCTAssertTrue(toggle.isOn)
        XCTAssertEqual(events, [.valueChanged, .primaryActionTriggered])
        try settle(host)
        try assertThumb(host, on: true, toggle)
        try? FileManager.default.createDirectory(at: GoldenImage.outputDirectory, withIntermediateDirectories: true)
        try? OffscreenRender.capture(host)?.writePNG(to: GoldenImage.outputDirectory.appendingPathComponent("switch-on.png").path)
        host.setRootNode(nil)
    }

    func testSpaceFlipsTheFocusedSwitchBackAndForth() async throws {
        let toggle = SwitchNode()
        let host = try show(toggle)
        var changes = 0
        toggle.addTarget(for: .valueChanged) { _, _ in changes += 1 }
        frame(host, [.keyDown(.tab, modifiers: [])])
        XCTAssertTrue(host.focusedNode === toggle)
        frame(host, [.keyDown(.space, modifiers: [])])
        XCTAssertTrue(toggle.isOn)
        frame(host, [.keyDown(.space, modifiers: [])])
        XCTAssertFalse(toggle.isOn)
        XCTAssertEqual(changes, 2)
        try settle(host)
        try assertThumb(host, on: false, toggle)
        host.setRootNode(nil)
    }

    func testSetFromAnotherThreadItMovesWithoutAnEvent() async throws {
        let toggle = SwitchNode()
        let host = try show(toggle)
        var changes = 0
        toggle.addTarget(for: .valueChanged) { _, _ in changes += 1 }
        let box = toggle
        await Task.detached { box.isOn = true }.value
        try settle(host)
        try assertThumb(host, on: true, toggle)
        XCTAssertEqual(changes, 0, "a value set in code is not an event")
        host.setRootNode(nil)
    }

    func testADisabledSwitchIsDimmedAndCannotBeFlipped() async throws {
        let toggle = SwitchNode(isOn: true)
        let host = try show(toggle)
        toggle.isEnabled = false
        try settle(host)
        frame(host, [.pointerDown(Point(x: 30, y: 22), button: 1)])
        frame(host, [.pointerUp(Point(x: 30, y: 22), button: 1)])
        XCTAssertTrue(toggle.isOn)
        XCTAssertEqual(toggle.opacity, 0.45)
        let track = try colour(host, 20, 22)
        XCTAssertNotEqual(track, toggle.onColor, "dimmed")
        XCTAssertGreaterThan(Int(track.green), 0x30, "still green, at reduced opacity over the screen")
        host.setRootNode(nil)
    }
}
