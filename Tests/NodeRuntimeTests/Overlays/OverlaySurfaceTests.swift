import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A surface drawn by SDL's software renderer on the dummy driver (so its pixels can be read back),
/// whose input the test queues by hand.
@MainActor
final class FakeOverlaySurface: OverlaySurface {
    let compositor: Compositor
    let kind: Overlay.Kind
    private(set) var frames: [Rect]
    private(set) var isClosed = false
    var queued: [InputEvent] = []

    init(kind: Overlay.Kind, frame: Rect) throws {
        self.kind = kind
        frames = [frame]
        let backend = try SDLRenderBackend(.init(title: "surface", size: frame.size, scale: 1))
        compositor = Compositor(backend: backend, scale: 1, configuration: .init(clearColor: Color(rgb: 0x0000FF)))
    }

    func setFrame(_ frame: Rect) { frames.append(frame) }
    var hasPendingEvents: Bool { !queued.isEmpty }
    func takeEvents() -> [InputEvent] {
        defer { queued.removeAll() }
        return queued
    }
    func close() {
        XCTAssertFalse(isClosed, "closed once")
        isClosed = true
    }
}

/// A provider whose screen reaches past the window on every side.
@MainActor
final class FakeOverlaySurfaceProvider: OverlaySurfaceProvider {
    var screenBounds: Rect?
    var failsToMake = false
    private(set) var made: [FakeOverlaySurface] = []

    init(screenBounds: Rect?) { self.screenBounds = screenBounds }

    func makeSurface(kind: Overlay.Kind, frame: Rect) -> OverlaySurface? {
        guard !failsToMake, let surface = try? FakeOverlaySurface(kind: kind, frame: frame) else { return nil }
        made.append(surface)
        return surface
    }
}

/// Popups and tooltips drawn on surfaces of their own (`OverlaySurfaceProvider`): placed against the
/// provider's screen, drawn there and not in the window, their input routed as the window's, their
/// surfaces closed when they end; modal overlays and a failed surface stay in the window.
@MainActor
final class OverlaySurfaceTests: XCTestCase {
    private var harness: MenuHarness!
    private var log: MenuActionLog!
    private var provider: FakeOverlaySurfaceProvider!

    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        harness = try MenuHarness()
        log = MenuActionLog()
        // The window (400 × 300) sits at 100, 100 of a 1000 × 800 screen.
        provider = FakeOverlaySurfaceProvider(screenBounds: Rect(x: -100, y: -100, width: 1000, height: 800))
        harness.host.overlaySurfaceProvider = provider
    }

    override func tearDown() async throws {
        harness?.tearDown()
        harness = nil
    }

    private func fileMenu() -> Menu {
        Menu("File") {
            log.item("New")
            log.item("Open")
            log.item("Close")
        }
    }

    func testAContextMenuNearTheWindowsCornerReachesPastItOntoTheScreen() async throws {
        harness.screen.contextMenu = fileMenu()
        let corner = Point(x: 390, y: 290)
        harness.frame([.pointerMoved(corner), .pointerDown(corner, button: 3)])
        harness.frame([.pointerUp(corner, button: 3)])
        let menu = try XCTUnwrap(harness.menus.first)
        XCTAssertEqual(menu.frame.origin, corner, "below and right of the pointer, past the window's edge")
        XCTAssertGreaterThan(menu.frame.maxX, 400)
        XCTAssertGreaterThan(menu.frame.maxY, 300)
        let surface = try XCTUnwrap(provider.made.first)
        XCTAssertEqual(surface.kind, .popup)
        XCTAssertEqual(surface.frames.last, menu.frame, "the surface covers the menu")
        XCTAssertTrue(harness.host.overlays.first?.surface === surface)

        // Near the screen's corner it flips, against the screen's bounds.
        harness.key(.escape)
        XCTAssertTrue(surface.isClosed)
        provider.screenBounds = Rect(x: 0, y: 0, width: 400, height: 300)
        harness.frame([.pointerMoved(corner), .pointerDown(corner, button: 3)])
        harness.frame([.pointerUp(corner, button: 3)])
        let flipped = try XCTUnwrap(harness.menus.first)
        XCTAssertEqual(flipped.frame.maxX, corner.x, accuracy: 0.5, "flipped left on a screen that ends there")
        XCTAssertEqual(flipped.frame.maxY, corner.y, accuracy: 0.5, "flipped up")
    }

    func testTheContentIsDrawnInItsSurfaceAndNotInTheWindow() async throws {
        try harness.settle()
        let before = try XCTUnwrap(OffscreenRender.capture(harness.host))
        let card = Node()
        card.backgroundColor = Color(rgb: 0xFF0000)
        card.style.preferredSize = Size(width: 120, height: 80)
        let overlay = harness.host.presentOverlay(card, kind: .popup,
                                                  positioner: PopupPositioner(anchor: Rect(x: 200, y: 100, width: 0, height: 0)))
        try harness.settle()
        XCTAssertEqual(overlay.contentFrame, Rect(x: 200, y: 100, width: 120, height: 80))
        let window = try XCTUnwrap(OffscreenRender.capture(harness.host))
        XCTAssertEqual(window.pixel(x: 260, y: 140), before.pixel(x: 260, y: 140), "the window does not draw the popup")
        let surface = try XCTUnwrap(overlay.surface)
        let drawn = try XCTUnwrap(surface.compositor.capture(overlay.surfaceRootLayer))
        XCTAssertEqual(drawn.width, 120)
        XCTAssertEqual(drawn.height, 80)
        for (x, y) in [(1, 1), (60, 40), (118, 78)] {
            XCTAssertEqual(drawn.pixel(x: x, y: y) & 0xFFFFFF, 0xFF0000, "the surface shows the content at \(x), \(y)")
        }
        XCTAssertGreaterThan(surface.compositor.presentCount, 0, "the frame drew the surface")
        let presents = surface.compositor.presentCount
        harness.frame()
        harness.frame()
        XCTAssertEqual(surface.compositor.presentCount, presents, "a popup at rest presents nothing")
        XCTAssertFalse(harness.host.needsFrame)
        overlay.dismiss()
        XCTAssertTrue((surface as? FakeOverlaySurface)?.isClosed == true, "the surface closed with the overlay")
        XCTAssertNil(overlay.surface)
    }

    func testAMenuItemClickedThroughTheSurfaceRunsItsAction() async throws {
        let overlay = harness.host.showMenu(fileMenu(), at: Point(x: 150, y: 40))
        try harness.settle()
        let menu = try XCTUnwrap(overlay.content as? MenuNode)
        let surface = try XCTUnwrap(provider.made.first)
        XCTAssertFalse(harness.host.needsFrame)
        let item = harness.centre(of: 1, in: menu)
        let inSurface = Point(x: item.x - menu.frame.minX, y: item.y - menu.frame.minY)
        surface.queued = [.pointerMoved(inSurface)]
        XCTAssertTrue(harness.host.needsFrame, "input waiting in a surface needs a frame")
        harness.frame()
        XCTAssertFalse(surface.hasPendingEvents)
        XCTAssertEqual(menu.highlightedIndex, 1, "the pointer over the surface hovers the item")
        surface.queued = [.pointerDown(inSurface, button: 1)]
        harness.frame()
        surface.queued = [.pointerUp(inSurface, button: 1)]
        harness.frame()
        XCTAssertEqual(log.chosen, ["Open"])
        XCTAssertTrue(harness.menus.isEmpty)
        XCTAssertTrue(surface.isClosed, "the menu's surface closed as it ended")
    }

    func testATooltipGetsASurfaceAndAModalOverlayStaysInTheWindow() async throws {
        let tip = Node()
        tip.backgroundColor = Color(rgb: 0x00FF00)
        tip.style.preferredSize = Size(width: 50, height: 20)
        let tooltip = harness.host.presentOverlay(tip, kind: .tooltip,
                                                  positioner: PopupPositioner(anchor: Rect(x: 380, y: 10, width: 10, height: 10)))
        harness.frame()
        XCTAssertEqual(provider.made.map(\.kind), [.tooltip])
        XCTAssertGreaterThan(tooltip.contentFrame.maxX, 400, "a tooltip may reach past the window too")
        let dialog = Node()
        dialog.style.preferredSize = Size(width: 100, height: 100)
        let modal = harness.host.presentOverlay(dialog, kind: .modal,
                                                positioner: PopupPositioner(anchor: Rect(x: 390, y: 10, width: 0, height: 0)))
        harness.frame()
        XCTAssertTrue(provider.made[0].isClosed, "the tooltip gave way to the dialog")
        XCTAssertEqual(provider.made.count, 1, "no surface for a modal overlay")
        XCTAssertNil(modal.surface)
        XCTAssertLessThanOrEqual(modal.contentFrame.maxX, 400, "placed within the window")
        modal.dismiss()
    }

    func testAPopupWhoseSurfaceCannotBeMadeIsDrawnInTheWindow() async throws {
        provider.failsToMake = true
        let overlay = harness.host.showMenu(fileMenu(), at: Point(x: 390, y: 290))
        try harness.settle()
        XCTAssertNil(overlay.surface)
        let frame = overlay.contentFrame
        XCTAssertTrue(frame.maxX <= 400 && frame.maxY <= 300, "placed within the window again: \(frame)")
        XCTAssertTrue(overlay.content.layerIfLoaded?.superlayer === overlay.container.layerIfLoaded)
    }

    func testASubmenuOfAMenuOnASurfaceOpensBesideItOnItsOwnSurface() async throws {
        let menu = Menu("File") {
            log.item("New")
            Menu("Recent") { log.item("notes.txt") }
        }
        harness.host.showMenu(menu, at: Point(x: 300, y: 250))
        try harness.settle()
        harness.keys(.down, .down, .right)
        XCTAssertEqual(harness.menus.count, 2, "Right opened Recent")
        let (parent, submenu) = (harness.menus[0], harness.menus[1])
        XCTAssertEqual(submenu.frame.minX, parent.frame.maxX, accuracy: 0.5,
                       "beside its menu in window points, past the window's edge: \(submenu.frame), \(parent.frame)")
        XCTAssertGreaterThan(submenu.frame.maxX, 400)
        XCTAssertEqual(provider.made.count, 2, "each menu of the chain on a surface of its own")
        XCTAssertEqual(provider.made[1].frames.last, submenu.frame)
        harness.key(.enter)
        XCTAssertEqual(log.chosen, ["notes.txt"])
        XCTAssertTrue(provider.made.allSatisfy(\.isClosed), "the whole chain's surfaces closed")
    }

    func testTheFocusRingOfANodeOnASurfaceIsDrawnOnThatSurface() async throws {
        let card = Node()
        card.style.preferredSize = Size(width: 120, height: 60)
        let button = ButtonNode(title: "OK")
        button.frame = Rect(x: 10, y: 10, width: 60, height: 30)
        card.addSubnode(button)
        let overlay = harness.host.presentOverlay(card, kind: .popup,
                                                  positioner: PopupPositioner(anchor: Rect(x: 380, y: 280, width: 0, height: 0)))
        try harness.settle()
        XCTAssertTrue(harness.host.focusedNode === button, "the popup's first focusable node took the focus")
        // As a Tab shows it (with one focusable node in the popup, Tab has nowhere else to go).
        harness.host.showsFocusRing = true
        harness.frame()
        let ring = try XCTUnwrap(harness.host.focusRing)
        XCTAssertFalse(ring.isHidden)
        XCTAssertTrue(ring.superlayer === overlay.surfaceRootLayer, "drawn on the popup's surface, not in the window")
        let frame = overlay.contentFrame
        XCTAssertEqual(ring.frame.minX, frame.minX + 10 - NodeHost.focusRingOutset, accuracy: 0.5, "around the button: \(ring.frame)")
        overlay.dismiss()
        harness.frame()
        XCTAssertFalse(ring.superlayer === overlay.surfaceRootLayer && !ring.isHidden)
    }

    func testAWindowThatMovesUnderAPopupMovesItsSurfaceAlongAndPlacesItAgainstTheScreen() async throws {
        let overlay = harness.host.showMenu(fileMenu(), at: Point(x: 300, y: 100))
        try harness.settle()
        let surface = try XCTUnwrap(provider.made.first)
        let placed = overlay.contentFrame
        XCTAssertEqual(placed.origin, Point(x: 300, y: 100))
        let moves = surface.frames.count
        // The window moved 50 points right: the screen's right edge is 50 points nearer in its points.
        provider.screenBounds = Rect(x: -150, y: -100, width: 1000, height: 800)
        harness.frame()
        XCTAssertEqual(overlay.contentFrame, placed, "still fits: the same place in the window")
        XCTAssertEqual(surface.frames.count, moves + 1, "the surface is placed again, with the window")
        // Moved so far right that the menu no longer fits on the screen beside the pointer: it flips.
        provider.screenBounds = Rect(x: -650, y: -100, width: 1000, height: 800)
        harness.frame()
        XCTAssertEqual(overlay.contentFrame.maxX, 300, accuracy: 0.5, "flipped left at the screen's edge: \(overlay.contentFrame)")
        XCTAssertEqual(surface.frames.last, overlay.contentFrame)
        harness.frame()
        XCTAssertEqual(surface.frames.count, moves + 2, "placed once a move")
    }

    func testThePointerLeavingASurfaceForTheWindowStaysInTheWindow() async throws {
        harness.host.showMenu(fileMenu(), at: Point(x: 150, y: 40))
        try harness.settle()
        let surface = try XCTUnwrap(provider.made.first)
        let inWindow = Point(x: 100, y: 200)
        surface.queued = [.pointerLeftWindow]
        harness.frame([.pointerMoved(inWindow)])
        XCTAssertEqual(harness.host.pointerLocation, inWindow, "the window's motion says where the pointer is")
        surface.queued = [.pointerLeftWindow]
        harness.frame()
        XCTAssertNil(harness.host.pointerLocation, "left for somewhere outside the app")
    }
}
