import Compositor
import Dispatch
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// A card that shows a title over a badge, or, expanded, a detail over the title: its layout spec
/// decides which subnodes exist (`automaticallyManagesSubnodes`).
private final class ExpandableNode: Node, @unchecked Sendable {
    let title = Node(), detail = Node(), badge = Node()
    private let expansion = Locked(false)
    var expanded: Bool {
        get { expansion.withLock { $0 } }
        set { expansion.withLock { $0 = newValue } }
    }

    override init() {
        super.init()
        automaticallyManagesSubnodes = true
        backgroundColor = Color(rgb: 0x000000)
        title.backgroundColor = Color(rgb: 0xFF0000)
        title.preferredSize = Size(width: 200, height: 40)
        detail.backgroundColor = Color(rgb: 0x00FF00)
        detail.preferredSize = Size(width: 200, height: 60)
        badge.backgroundColor = Color(rgb: 0x0000FF)
        badge.preferredSize = Size(width: 200, height: 30)
    }

    /// When set, the next measurement waits until the test opens it (a measurement that loses a
    /// race on a loaded machine).
    let gate = Locked<MeasurementGate?>(nil)

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        if let gate = gate.withLock({ gate -> MeasurementGate? in defer { gate = nil }; return gate }) { gate.hold() }
        return expanded ? VStack(spacing: 0) { detail; title } as any LayoutSpec : VStack(spacing: 0) { title; badge }
    }
}

/// Holds one measurement until opened. - Thread: any
private final class MeasurementGate: Sendable {
    private let entered = DispatchSemaphore(value: 0)
    private let opened = DispatchSemaphore(value: 0)
    func hold() {
        entered.signal()
        opened.wait()
    }
    func waitUntilEntered() { entered.wait() }
    func open() { opened.signal() }
}

/// `transitionLayout`: measured off the UI thread, then the staying subnode slides, the new one fades
/// in, the removed one fades out where it was, and the completion runs at the end.
@MainActor
final class LayoutTransitionTests: XCTestCase {
    func testAnExpandingCardSlidesFadesInAndFadesOut() async throws {
        let (host, _) = try OffscreenRender.makeHost(size: Size(width: 200, height: 200), configuration: .init(clearColor: Color(rgb: 0)))
        let card = ExpandableNode()
        host.setRootNode(card)
        var time = 0.0
        settle(host, time: &time)
        let titleLayer = try XCTUnwrap(card.title.layerIfLoaded)
        XCTAssertEqual(titleLayer.frame.minY, 0)
        XCTAssertTrue(card.badge.supernode === card)

        card.expanded = true
        let completed = Locked(false)
        card.transitionLayout(duration: 0.25) { completed.withLock { $0 = true } }
        // The layout comes back from its background measurement; frames follow it.
        Node.backgroundLayouts.wait()
        var titleYs: [Double] = []
        var detailOpacities: [Double] = []
        var ghostSeen = false
        var middle: Bitmap?
        for step in 0..<30 {
            time += 1.0 / 60
            host.runFrame(time: time, events: [])
            titleYs.append(titleLayer.frame.minY)
            if let detail = card.detail.layerIfLoaded { detailOpacities.append(detail.opacity) }
            if card.layer.sublayers.contains(where: { $0.name == "transition-removed" }) { ghostSeen = true }
            if step == 6 { middle = OffscreenRender.capture(host) }
        }
        XCTAssertEqual(titleYs.last, 60, "the title ends below the detail")
        XCTAssertEqual(titleYs, titleYs.sorted(), "it only moves down")
        XCTAssertTrue(titleYs.contains { $0 > 1 && $0 < 59 }, "through the places between: \(titleYs)")
        XCTAssertTrue(detailOpacities.contains { $0 > 0.05 && $0 < 0.95 }, "the detail fades in: \(detailOpacities)")
        XCTAssertEqual(detailOpacities.last, 1)
        XCTAssertTrue(ghostSeen, "the badge fades out where it was")
        XCTAssertFalse(card.layer.sublayers.contains { $0.name == "transition-removed" }, "and is gone after")
        XCTAssertNil(card.badge.supernode)
        XCTAssertTrue(completed.withLock { $0 })
        // Mid-way, on pixels: the badge's blue still shows faintly where it was (y 40–70).
        let pixels = try XCTUnwrap(middle)
        let blue = pixels.pixel(x: 100, y: 65) & 0xFF
        XCTAssertGreaterThan(blue, 20, "the fading badge")
        host.setRootNode(nil)
    }

    /// The host lays the tree out on its own as soon as the node asks for a layout; when its
    /// measurement lands before the transition's (as on a loaded machine), the boxes must not show
    /// at their end, jump back and then slide: whoever applies the layout first applies it as the
    /// transition.
    func testATransitionWhoseMeasurementLosesTheRaceToTheHostsLayoutStillSlides() async throws {
        let (host, _) = try OffscreenRender.makeHost(size: Size(width: 200, height: 200), configuration: .init(clearColor: Color(rgb: 0)))
        XCTAssertTrue(host.measuresLayoutInBackground)
        let card = ExpandableNode()
        host.setRootNode(card)
        var time = 0.0
        settle(host, time: &time)
        let titleLayer = try XCTUnwrap(card.title.layerIfLoaded)
        XCTAssertEqual(titleLayer.frame.minY, 0)

        card.expanded = true
        let gate = MeasurementGate()
        card.gate.withLock { $0 = gate }
        card.transitionLayout(duration: 0.25)
        // The transition's own measurement is held; the host measures the tree and applies it.
        gate.waitUntilEntered()
        var titleYs: [Double] = []
        var frames = 0
        repeat {
            time += 1.0 / 60
            host.runFrame(time: time, events: [])
            titleYs.append(titleLayer.frame.minY)
            frames += 1
            if host.isLayoutInFlight { usleep(2_000) }
        } while (host.isLayoutInFlight || frames < 3) && frames < 2_000
        XCTAssertFalse(host.isLayoutInFlight, "the host's layout landed")
        gate.open()
        Node.backgroundLayouts.wait()
        for _ in 0..<30 {
            time += 1.0 / 60
            host.runFrame(time: time, events: [])
            titleYs.append(titleLayer.frame.minY)
        }
        XCTAssertEqual(titleYs.last, 60, "the title ends below the detail")
        XCTAssertEqual(titleYs, titleYs.sorted(), "it only moves down, never back: \(titleYs)")
        XCTAssertTrue(titleYs.contains { $0 > 1 && $0 < 59 }, "it slides: \(titleYs)")
        host.setRootNode(nil)
    }

    /// A transition that interrupts another starts from where the boxes are, not from where the
    /// first was taking them, and a shorter second one ends with each box where the layout puts it.
    func testAnInterruptedTransitionStartsWhereTheBoxIsAndEndsWhereTheLayoutSays() async throws {
        let (host, _) = try OffscreenRender.makeHost(size: Size(width: 200, height: 200), configuration: .init(clearColor: Color(rgb: 0)))
        host.measuresLayoutInBackground = false
        let card = ExpandableNode()
        host.setRootNode(card)
        var time = 0.0
        settle(host, time: &time)
        let titleLayer = try XCTUnwrap(card.title.layerIfLoaded)

        card.expanded = true
        card.transitionLayout(duration: 0.5)
        var titleYs: [Double] = []
        for _ in 0..<8 {
            time += 1.0 / 60
            host.runFrame(time: time, events: [])
            titleYs.append(titleLayer.frame.minY)
        }
        let midway = try XCTUnwrap(titleYs.last)
        XCTAssertTrue(midway > 5 && midway < 55, "mid-slide: \(titleYs)")

        // Collapsed again, quicker: the title heads back up from where it is.
        card.expanded = false
        card.transitionLayout(duration: 0.1)
        var backYs: [Double] = []
        for _ in 0..<60 {
            time += 1.0 / 60
            host.runFrame(time: time, events: [])
            backYs.append(titleLayer.frame.minY)
        }
        let first = try XCTUnwrap(backYs.first)
        XCTAssertLessThanOrEqual(first, midway + 0.5, "no jump towards where the first transition was going: \(midway) then \(backYs)")
        XCTAssertEqual(backYs, backYs.sorted(by: >), "straight back up: \(backYs)")
        XCTAssertEqual(backYs.last, 0, "the title ends where the collapsed layout puts it, and stays: \(backYs)")
        XCTAssertEqual(card.title.frame.minY, 0)
        let pixels = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(pixels.pixel(x: 100, y: 20), 0xFFFF_0000, "the title's red at the top")
        host.setRootNode(nil)
    }

    func testANodeNotShowingJustLaysOutAgain() async throws {
        let card = ExpandableNode()
        card.frame = Rect(x: 0, y: 0, width: 200, height: 200)
        card.expanded = true
        let completed = Locked(false)
        card.transitionLayout { completed.withLock { $0 = true } }
        XCTAssertTrue(completed.withLock { $0 }, "no animation without a layer")
    }
}
