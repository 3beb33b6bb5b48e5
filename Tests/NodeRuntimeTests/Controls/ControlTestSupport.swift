import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A screen on the theme's background with one control at (10, 10), at its own size.
final class ControlScreenNode: Node, @unchecked Sendable {
    let control: Node
    init(_ control: Node) {
        self.control = control
        super.init()
        themedBackgroundColor = .background
        addSubnode(control)
    }
    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(alignItems: .start) { control }.inset(EdgeInsets(all: 10))
    }
}

/// One host showing one control: frames, keys, clicks and captures, for the controls' tests.
@MainActor
final class ControlHarness {
    let host: NodeHost
    let screen: ControlScreenNode
    private var time = 0.0

    init(_ control: Node, size: Size) throws {
        host = try PixelOracle.makeHost(size: size)
        screen = ControlScreenNode(control)
        host.setRootNode(screen)
        try settle()
    }

    func frame(_ events: [InputEvent] = []) {
        time += 1.0 / 60
        host.runFrame(time: time, events: events)
    }

    func settle() throws {
        _ = try host.settle(timeout: 10) {
            time += 0.25
            host.runFrame(time: time, events: [])
        }
    }

    func keys(_ keys: Key...) {
        for key in keys { frame([.keyDown(key, modifiers: []), .keyUp(key, modifiers: [])]) }
    }

    func click(_ point: Point) {
        frame([.pointerMoved(point), .pointerDown(point, button: 1)])
        frame([.pointerUp(point, button: 1)])
    }

    func capture() throws -> Bitmap { try XCTUnwrap(OffscreenRender.capture(host)) }

    func colour(_ x: Double, _ y: Double) throws -> Color {
        Color(premultipliedARGB: try capture().pixel(x: Int(x), y: Int(y)))
    }

    func tearDown() {
        host.setRootNode(nil)
        Runtime.shared.scheduler.waitUntilIdle()
        Runtime.shared.mainQueue.drain()
    }
}

/// The looks a control's golden shows side by side.
enum ControlLook: CaseIterable {
    case normal, hovered, pressed, focused, disabled
}

/// Renders a control in each look, one row per variant (unchecked, checked…), each cell a host of
/// `cell` size with the control at (10, 10), into one picture.
@MainActor
enum ControlStrip {
    /// `make(row)` makes the control for a row and says where, in the window, to hover and press it.
    static func render(rows: Int, cell: Size, looks: [ControlLook] = ControlLook.allCases,
                       make: (Int) -> (control: ControlNode, point: Point)) throws -> Bitmap {
        var context = try BitmapContext(size: Size(width: cell.width * Double(looks.count), height: cell.height * Double(rows)))
        for row in 0..<rows {
            for (column, look) in looks.enumerated() {
                let (control, point) = make(row)
                if look == .disabled { control.isEnabled = false }
                let harness = try ControlHarness(control, size: cell)
                switch look {
                case .normal, .disabled: break
                case .hovered: harness.frame([.pointerMoved(point)])
                case .pressed: harness.frame([.pointerMoved(point), .pointerDown(point, button: 1)])
                case .focused: harness.keys(.tab)
                }
                try harness.settle()
                context.draw(try harness.capture(), in: Rect(x: cell.width * Double(column), y: cell.height * Double(row),
                                                             width: cell.width, height: cell.height))
                if look == .pressed { harness.frame([.pointerUp(point, button: 1)]) }
                harness.tearDown()
            }
        }
        return context.makeBitmap()
    }
}
