import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Controls stacked in a column on a themed background, in a host over SDL's software renderer (so
/// its screen can be read back), driven through the host's event path on a virtual clock: the one
/// driver of the slider, progress and search field tests.
@MainActor
final class ControlsHarness {
    let host: NodeHost
    let root: SpecNode
    /// The frame time of the last frame run.
    private(set) var time = 0.0

    /// `controls`, each `size`, 8 points apart in a column inset 10 points from the window's top left,
    /// in a `windowSize` window; laid out on the UI thread, settled.
    init(_ controls: [Node], size: Size, windowSize: Size) throws {
        TextFixtures.useRepositoryFonts()
        Runtime.shared.contentsScale = 1
        host = try PixelOracle.makeHost(size: windowSize)
        host.measuresLayoutInBackground = false
        let elements = controls
        root = SpecNode("controls") { _ in
            VStack(spacing: 8, alignItems: .start) { elements.map { $0.size(size).flexShrink(0) } }.inset(EdgeInsets(all: 10))
        }
        root.themedBackgroundColor = .background
        host.setRootNode(root)
        try settle()
    }

    /// One frame `seconds` after the last, with `events`.
    func frame(_ events: [InputEvent] = [], after seconds: Double = 1.0 / 60) {
        time += seconds
        host.runFrame(time: time, events: events)
    }

    /// Frames until the host is settled (at most 2 s of wall time).
    func settle() throws {
        try host.settle(timeout: 2) { frame() }
    }

    /// `point` in the window of `local` in `node`.
    func point(_ local: Point, in node: Node) -> Point {
        let origin = Self.origin(of: node)
        return Point(x: origin.x + local.x, y: origin.y + local.y)
    }

    /// Where `node`'s origin is in the window.
    static func origin(of node: Node) -> Point {
        let zero = node.convertFromRoot(.zero)
        return Point(x: -zero.x, y: -zero.y)
    }

    func key(_ key: Key, _ modifiers: KeyModifiers = []) {
        frame([.keyDown(key, modifiers: modifiers), .keyUp(key, modifiers: modifiers)])
    }

    func type(_ text: String) { frame([.textInput(text)]) }

    /// A press and release of the primary button at `point`, the pointer moved there first.
    func click(_ point: Point) {
        frame([.pointerMoved(point)])
        frame([.pointerDown(point, button: 1)])
        frame([.pointerUp(point, button: 1)])
    }

    /// The screen as it is now.
    func capture() throws -> Bitmap { try XCTUnwrap(OffscreenRender.capture(host)) }

    /// The colour of the pixel at (`x`, `y`) of `bitmap`.
    static func colour(_ bitmap: Bitmap, _ x: Double, _ y: Double) -> Color {
        Color(premultipliedARGB: bitmap.pixel(x: Int(x), y: Int(y)))
    }

    /// The element of the host's accessibility tree that is `node`'s: the one with its frame and role.
    func element(role: AccessibilityRole, of node: Node) -> AccessibilityElement? {
        let frame = Rect(origin: Self.origin(of: node), size: node.bounds.size)
        return host.accessibilityTree().root.first { $0.role == role && $0.frame == frame }
    }

    /// Takes the controls off and lets the runtime finish their work.
    func tearDown() {
        host.setRootNode(nil)
        Runtime.shared.scheduler.waitUntilIdle()
        Runtime.shared.mainQueue.drain()
    }
}
