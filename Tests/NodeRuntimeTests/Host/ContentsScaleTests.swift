import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Each window draws at its own pixels per point: nodes take the scale of the host they are in (a
/// list's rows the list's), and a window that moves to a display of another density draws again.
@MainActor
final class ContentsScaleTests: XCTestCase {
    private var time = 0.0

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
    }

    private func makeHost(scale: Double) -> NodeHost {
        let backend = RecordingRenderBackend(width: Int(320 * scale), height: Int(240 * scale))
        return NodeHost(compositor: Compositor(backend: backend, scale: scale))
    }

    private func label() -> TextNode {
        let node = TextNode("Scale", attributes: TextAttributes(font: .system(size: 20)))
        node.backgroundColor = .white
        return node
    }

    private func root(with child: Node) -> Node {
        SpecNode("root") { _ in VStack { child.flexShrink(0) } }
    }

    func testTwoWindowsDrawTheirNodesAtTheirOwnScales() async throws {
        let defaultScale = Runtime.shared.contentsScale
        let oneX = makeHost(scale: 1), twoX = makeHost(scale: 2)
        let a = label(), b = label()
        oneX.setRootNode(root(with: a))
        twoX.setRootNode(root(with: b))
        settle(oneX, time: &time)
        settle(twoX, time: &time)
        XCTAssertEqual(a.contentsScale, 1)
        XCTAssertEqual(b.contentsScale, 2)
        let aBitmap = try XCTUnwrap(a.layerIfLoaded?.contents)
        let bBitmap = try XCTUnwrap(b.layerIfLoaded?.contents)
        XCTAssertEqual(aBitmap.scale, 1)
        XCTAssertEqual(bBitmap.scale, 2)
        XCTAssertEqual(bBitmap.width, 2 * aBitmap.width, "the same text, twice the pixels across")
        XCTAssertEqual(a.textLayout.scale, 1)
        XCTAssertEqual(b.textLayout.scale, 2)
        XCTAssertEqual(Runtime.shared.contentsScale, defaultScale, "no host changes the process-wide default")
    }

    func testAScaleChangeDrawsTheWindowAgainAtTheNewScale() async throws {
        let host = makeHost(scale: 1)
        let text = label()
        let source = TestListSource(count: 30, height: 40)
        source.makeNode = { _, _ in
            let row = TextNode("Row", attributes: TextAttributes(font: .system(size: 15)))
            row.backgroundColor = .white
            return row
        }
        let list = ListNode()
        list.dataSource = source
        let root = SpecNode("root") { _ in
            VStack { text.flexShrink(0); list.flexGrow(1) }
        }
        host.setRootNode(root)
        host.addFrameParticipant(list)
        settle(host, time: &time)
        let rowBefore = try XCTUnwrap(list.nodeForRow(0))
        XCTAssertEqual(rowBefore.layerIfLoaded?.contents?.scale, 1)

        time += 1.0 / 60
        host.runFrame(time: time, events: [.contentsScaleChanged(2)])
        for _ in 0..<3 { settle(host, time: &time) }
        XCTAssertEqual(host.contentsScale, 2)
        XCTAssertEqual(host.compositor.scale, 2)
        XCTAssertEqual(text.layerIfLoaded?.contents?.scale, 2, "the text is drawn again at 2x")
        XCTAssertEqual(text.textLayout.scale, 2, "and measured again at 2x")
        let rowAfter = try XCTUnwrap(list.nodeForRow(0))
        XCTAssertEqual(rowAfter.contentsScale, 2, "list rows are made again at the new scale")
        XCTAssertEqual(rowAfter.layerIfLoaded?.contents?.scale, 2)
        XCTAssertEqual(host.viewportSize, Size(width: 160, height: 120), "the same pixels are half as many points")
    }

    /// The menu bar and what floats over the root (a popup here) are outside the root's tree: a
    /// scale change draws them again at the new scale too, not their old pictures scaled up.
    func testAScaleChangeDrawsTheMenuBarAndOverlaysAgainAtTheNewScale() async throws {
        let host = makeHost(scale: 1)
        host.setRootNode(root(with: label()))
        host.menuBar = MenuBarNode(menus: [Menu("File") { MenuItem("Quit") {} }])
        let popup = label()
        let overlay = host.presentOverlay(popup, kind: .popup,
                                          positioner: PopupPositioner(anchor: Rect(x: 100, y: 100, width: 10, height: 10)))
        settle(host, time: &time)
        func texts(_ node: Node) -> [TextNode] { ((node as? TextNode).map { [$0] } ?? []) + node.subnodes.flatMap(texts) }
        let barTexts = texts(try XCTUnwrap(host.menuBar))
        XCTAssertFalse(barTexts.isEmpty)
        XCTAssertEqual(barTexts.compactMap { $0.layerIfLoaded?.contents?.scale }, barTexts.map { _ in 1 })
        XCTAssertEqual(popup.layerIfLoaded?.contents?.scale, 1)

        time += 1.0 / 60
        host.runFrame(time: time, events: [.contentsScaleChanged(2)])
        for _ in 0..<3 { settle(host, time: &time) }
        XCTAssertEqual(host.menuBar?.contentsScale, 2)
        XCTAssertEqual(barTexts.compactMap { $0.layerIfLoaded?.contents?.scale }, barTexts.map { _ in 2 },
                       "the menu bar's titles are drawn again at 2x")
        XCTAssertEqual(overlay.container.contentsScale, 2)
        XCTAssertEqual(popup.layerIfLoaded?.contents?.scale, 2, "the popup's content is drawn again at 2x")
    }

    func testRowsTakeTheirListsScaleBeforeTheyAreMeasured() async {
        let host = makeHost(scale: 2)
        let list = ListNode()
        let measuredScales = Locked<[Double]>([])
        let source = TestListSource(count: 5, height: 30)
        source.makeNode = { _, height in
            ScaleProbeNode(height: height) { scale in measuredScales.withLock { $0.append(scale) } }
        }
        list.dataSource = source
        host.setRootNode(SpecNode("root") { _ in VStack { list.flexGrow(1) } })
        host.addFrameParticipant(list)
        settle(host, time: &time)
        let scales = measuredScales.withLock { $0 }
        XCTAssertFalse(scales.isEmpty)
        XCTAssertEqual(Set(scales), [2], "rows measured on workers already know their window's scale")
    }
}

/// Reports the scale it is measured at.
private final class ScaleProbeNode: Node, @unchecked Sendable {
    let height: Double
    let report: @Sendable (Double) -> Void
    init(height: Double, report: @escaping @Sendable (Double) -> Void) {
        self.height = height
        self.report = report
        super.init()
    }
    override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        report(contentsScale)
        return Size(width: constrainedSize.width.isFinite ? constrainedSize.width : 0, height: height)
    }
}
