import Foundation
import XCTest
@testable import Compositor

/// A drop as SDL reports it (begin, an event per file or text, complete) becomes one
/// `InputEvent.dropped` with every item in order; a drag's place (entered, moved, left) becomes
/// `dragMoved` in window points and `dragExited`; both reach only the window they are for.
@MainActor
final class SDLDropEventTests: XCTestCase {
    private func window(_ title: String) throws -> SDLWindow {
        try SDLWindow(SDLWindow.Configuration(title: title, size: Size(width: 100, height: 80), scale: 2, headless: true))
    }

    private func inputs(_ window: SDLWindow) -> [InputEvent] {
        window.pollEvents().compactMap { if case let .input(input) = $0 { return input } else { return nil } }
    }

    func testADropBecomesOneEventWithEveryItemInOrder() async throws {
        let window = try window("drops")
        window.pushDrop([.file("/tmp/one.png"), .text("two"), .file("/tmp/three é.jpg")])
        let events = inputs(window).filter { if case .dropped = $0 { return true } else { return false } }
        XCTAssertEqual(events, [.dropped([.file("/tmp/one.png"), .text("two"), .file("/tmp/three é.jpg")], at: nil)],
                       "one drop, no place on the dummy driver")
        // An empty drop (every item refused by the platform) is a drag that left.
        window.pushDrop([])
        XCTAssertEqual(inputs(window).filter { $0 == .dragExited || { if case .dropped = $0 { return true } else { return false } }($0) },
                       [.dragExited])
    }

    func testADragsPlaceIsInWindowPointsAndReachesItsOwnWindowOnly() async throws {
        let first = try window("first"), second = try window("second")
        let origin = first.windowPlacement.state.origin
        // Screen units: the window's origin plus 40×30 window units at scale 2.
        first.pushDrag(kind: 1, screenPoint: Point(x: origin.x + 40, y: origin.y + 30))
        first.pushDrag(kind: 2, screenPoint: Point(x: origin.x + 60, y: origin.y + 30))
        first.pushDrag(kind: 3)
        let read = inputs(first).filter { if case .dragMoved = $0 { return true }; return $0 == .dragExited }
        XCTAssertEqual(read, [.dragMoved(Point(x: 20, y: 15)), .dragMoved(Point(x: 30, y: 15)), .dragExited])
        XCTAssertTrue(inputs(second).allSatisfy { if case .dragMoved = $0 { return false }; return $0 != .dragExited },
                      "the other window saw none of it")
        // A drop after a drag takes the drag's last place.
        first.pushDrag(kind: 2, screenPoint: Point(x: origin.x + 10, y: origin.y + 8))
        first.pushDrop([.file("/a")])
        XCTAssertEqual(inputs(first).last, .dropped([.file("/a")], at: Point(x: 5, y: 4)))
    }
}
