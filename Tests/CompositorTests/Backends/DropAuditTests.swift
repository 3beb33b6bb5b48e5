import Foundation
import XCTest
@testable import Compositor

/// Drops and drags at their edges: the drag's end at the drop message, a drop read in several reads,
/// a drop under a modal window, a drop of very many files, paths that are not UTF-8, coordinates
/// out of any range.
@MainActor
final class DropAuditTests: XCTestCase {
    private func window(_ title: String) throws -> SDLWindow {
        try SDLWindow(SDLWindow.Configuration(title: title, size: Size(width: 100, height: 80), scale: 2, headless: true))
    }

    private func inputs(_ window: SDLWindow) -> [InputEvent] {
        window.pollEvents().compactMap { if case let .input(input) = $0 { return input } else { return nil } }
    }

    private func dragAndDrops(_ events: [InputEvent]) -> [InputEvent] {
        events.filter {
            switch $0 {
            case .dragMoved, .dragExited, .dropped: return true
            default: return false
            }
        }
    }

    /// XDND's drop message ends the drag over the window: SDL sends no drop at all when it took none
    /// of the drag's types (or the source could not give the data), and a target lit by the drag
    /// would stay lit. The drop that follows still comes at the drag's last place.
    func testTheDropMessageEndsTheDragAndTheDropKeepsItsPlace() async throws {
        let window = try window("drop message")
        let origin = window.windowPlacement.state.origin
        window.pushDrag(kind: 1, screenPoint: Point(x: origin.x + 40, y: origin.y + 30))
        window.pushDrag(kind: 4)
        XCTAssertEqual(dragAndDrops(inputs(window)), [.dragMoved(Point(x: 20, y: 15)), .dragExited],
                       "a drop SDL does not report ends the drag all the same")
        window.pushDrop([.text("a")])
        XCTAssertEqual(dragAndDrops(inputs(window)), [.dropped([.text("a")], at: Point(x: 20, y: 15))])
    }

    /// A drop read in pieces (its begin in one read, its items and completion in later ones) is one drop.
    func testADropSplitAcrossReadsIsOneDrop() async throws {
        let window = try window("split")
        window.pushDropPart(0)
        window.pushDropPart(1, bytes: Array("/tmp/a".utf8))
        XCTAssertEqual(dragAndDrops(inputs(window)), [])
        window.pushDropPart(2, bytes: Array("b".utf8))
        XCTAssertEqual(dragAndDrops(inputs(window)), [])
        window.pushDropPart(3)
        XCTAssertEqual(dragAndDrops(inputs(window)), [.dropped([.file("/tmp/a"), .text("b")], at: nil)])
    }

    /// Under a modal window a drop is dropped as it is read, and the next drop after the modal
    /// window has gone carries only its own items.
    func testADropUnderAModalWindowLeavesNothingForTheNextDrop() async throws {
        let window = try self.window("blocked"), dialog = try self.window("dialog")
        window.inputBlockedBy = dialog.windowID
        window.pushDropPart(0)
        window.pushDropPart(1, bytes: Array("/tmp/blocked".utf8))
        _ = inputs(window)
        window.pushDropPart(3)
        XCTAssertFalse(inputs(window).contains { if case .dropped = $0 { return true } else { return false } })
        window.inputBlockedBy = nil
        window.pushDrop([.file("/tmp/free")])
        XCTAssertEqual(dragAndDrops(inputs(window)), [.dropped([.file("/tmp/free")], at: nil)])
        _ = dialog
    }

    /// A drop of very many files is gathered in time linear in their number (SDL's queue holds up
    /// to 65535 events): 20,000 files read well within half a second (some 4 s quadratic).
    func testADropOfVeryManyFilesIsGatheredInLinearTime() async throws {
        let window = try window("many")
        let count = 20_000
        window.pushDropPart(0)
        for index in 0..<count { window.pushDropPart(1, bytes: Array("/tmp/file-\(index).png".utf8)) }
        window.pushDropPart(3)
        let start = Date()
        let dropped = inputs(window).compactMap { if case let .dropped(items, _) = $0 { return items } else { return nil } }
        let elapsed = Date().timeIntervalSince(start)
        XCTAssertEqual(dropped.count, 1)
        XCTAssertEqual(dropped.first?.count, count)
        XCTAssertEqual(dropped.first?.last, .file("/tmp/file-\(count - 1).png"))
        XCTAssertLessThan(elapsed, 0.5, "gathered in linear time")
    }

    /// A file name that is not UTF-8 names no file once decoded (its bad bytes become U+FFFD): left
    /// out, as a URI that is no local file is. Text with bad bytes is kept, with U+FFFD for them.
    func testAFileNameThatIsNotUTF8IsLeftOutAndTextKeepsWhatItCan() async throws {
        let window = try window("bytes")
        window.pushDropPart(0)
        window.pushDropPart(1, bytes: Array("/tmp/caf".utf8) + [0xE9, 0x2E, 0x74, 0x78, 0x74])  // Latin-1 "café.txt"
        window.pushDropPart(1, bytes: Array("/tmp/ok".utf8))
        window.pushDropPart(2, bytes: [0x61, 0xFF, 0x62])
        window.pushDropPart(2, bytes: [])
        window.pushDropPart(3)
        XCTAssertEqual(dragAndDrops(inputs(window)), [.dropped([.file("/tmp/ok"), .text("a\u{FFFD}b")], at: nil)],
                       "the Latin-1 name and the empty text are left out")
    }

    /// A drag at coordinates out of any range (a test's, or a window system's garbage) is a place
    /// in window points all the same: finite, never a trap.
    func testAbsurdDragCoordinatesGiveAFinitePlace() async throws {
        let window = try window("absurd")
        window.pushDrag(kind: 2, screenPoint: Point(x: .infinity, y: -.infinity))
        window.pushDrag(kind: 2, screenPoint: Point(x: .nan, y: 1e300))
        window.pushDrag(kind: 2, screenPoint: Point(x: 65535, y: -70000))
        let places = dragAndDrops(inputs(window)).compactMap { if case let .dragMoved(point) = $0 { return point } else { return nil } }
        XCTAssertEqual(places.count, 3)
        XCTAssertTrue(places.allSatisfy { $0.x.isFinite && $0.y.isFinite })
        window.pushDrag(kind: 3)
        XCTAssertEqual(dragAndDrops(inputs(window)), [.dragExited])
    }

    /// The drag filter is put in place as the first window with an X window is registered; the
    /// events on SDL's queue then (the window's own, another thread's wake, a drop's items) are read
    /// all the same. SDL 2's `SDL_SetEventFilter` discards what is queued as it sets a filter.
    func testPuttingTheDragFilterInPlaceLosesNoQueuedEvent() async throws {
        let window = try window("filter")
        window.pushDrop([.file("/tmp/queued")])
        SDLDrags.register(x11Window: 0x7E55_E7A, window: window.windowID.rawValue)
        defer { SDLDrags.unregister(window: window.windowID.rawValue) }
        XCTAssertEqual(dragAndDrops(inputs(window)), [.dropped([.file("/tmp/queued")], at: nil)])
    }

    /// A popup window hidden before its first frame is not shown by that frame's present (a popup
    /// is shown at its first present, `showForFirstPresent`); one presented once stays as it is.
    func testAPopupHiddenBeforeItsFirstFrameStaysHidden() async throws {
        var configuration = SDLRenderBackend.Configuration(title: "popup", size: Size(width: 40, height: 30), scale: 1,
                                                           headless: true, renderDriver: .software)
        configuration.window.popup = .menu
        let backend = try SDLRenderBackend(configuration)
        let compositor = Compositor(backend: backend, scale: 1)
        let layer = Layer()
        layer.frame = Rect(x: 0, y: 0, width: 40, height: 30)
        layer.backgroundColor = Color(rgb: 0x3050D0)
        backend.window.hide()
        _ = compositor.render(layer)
        XCTAssertFalse(backend.window.isShown, "hidden, it stays hidden")
        XCTAssertFalse(backend.window.waitsForFirstPresent)
    }

    /// A drop for a window closed before it was read reaches no other window (its names freed as
    /// the other window reads them, `SDLEventRouting.release`), nor does a drag for it.
    func testADropForAWindowClosedBeforeItIsReadReachesNoOtherWindow() async throws {
        let other = try window("other")
        var closing: SDLWindow? = try window("closing")
        closing!.pushDrag(kind: 2, screenPoint: Point(x: 10, y: 10))
        closing!.pushDrop([.file("/tmp/lost"), .text("lost")])
        closing = nil
        XCTAssertEqual(dragAndDrops(inputs(other)), [])
        other.pushDrop([.text("kept")])
        XCTAssertEqual(dragAndDrops(inputs(other)), [.dropped([.text("kept")], at: nil)])
    }
}
