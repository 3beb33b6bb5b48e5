import Foundation
import Tessera
import TestSupport
import XCTest
@testable import NodeRuntime

/// Coloured squares for a collection. - Thread: main
@MainActor
private final class SquareSource: CollectionDataSource {
    func numberOfItems(in collection: CollectionNode) -> Int { 30 }
    func nodeBlockForItem(at item: Int, in collection: CollectionNode) -> CollectionNode.ItemNodeBlock {
        {
            let node = Node()
            node.backgroundColor = Color(rgb: item.isMultiple(of: 2) ? 0xD03030 : 0x3050D0)
            node.preferredSize = Size(width: 40, height: 40)
            return node
        }
    }
}

/// Rows of one height. - Thread: main
@MainActor
private final class PlainRows: ListDataSource {
    func numberOfRows(in list: ListNode) -> Int { 50 }
    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        {
            let node = Node()
            node.preferredSize = Size(width: 0, height: 30)
            return node
        }
    }
}

/// A screen: a title above `body`, laid out by `spec`.
private final class ScreenNode: Node, @unchecked Sendable {
    let title = Node()
    let body: Node
    let spec: @Sendable (Node, Node) -> any LayoutSpec

    init(body: Node, spec: @escaping @Sendable (Node, Node) -> any LayoutSpec) {
        self.body = body
        self.spec = spec
        super.init()
        title.preferredSize = Size(width: 0, height: 24)
        title.backgroundColor = Color(rgb: 0x404040)
        addSubnode(title)
        addSubnode(body)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? { spec(title, body) }
}

/// Layout mistakes that used to leave a blank screen and no word: growth given to what an inset wraps
/// works; a list or collection on screen with no length along its axis, or with no data source (never
/// set, or let go), says so once in `diagnostics`.
@MainActor
final class LayoutMistakeTests: XCTestCase {
    private func app(_ root: Node) throws -> Application {
        let app = try Application(configuration: .headless(size: Size(width: 200, height: 300)), rootNode: root)
        try app.settle()
        return app
    }

    func testGrowthOnWhatAnInsetWrapsGrowsTheInset() async throws {
        let source = SquareSource()
        let grid = CollectionNode()
        grid.dataSource = source
        let screen = ScreenNode(body: grid) { title, body in
            VStack(alignItems: .stretch) { title; body.flexGrow(1).inset(EdgeInsets(all: 8)) }
        }
        let app = try app(screen)
        defer { app.host.setRootController(nil); withExtendedLifetime(source) {} }
        XCTAssertEqual(grid.frame.height, 300 - 24 - 16, "the grid fills the rest of the screen")
        XCTAssertEqual(grid.diagnostics, [])
        let shot = try app.capture()
        XCTAssertEqual(Color(premultipliedARGB: shot.pixel(x: 20, y: 24 + 8 + 20)), Color(rgb: 0xD03030), "the first square shows")
    }

    func testAlignmentOnWhatAnInsetWrapsStopsTheStretch() async throws {
        let button = Node()
        button.preferredSize = Size(width: 60, height: 30)
        let screen = ScreenNode(body: button) { title, body in
            VStack(alignItems: .stretch) { title; body.alignSelf(.start).inset(EdgeInsets(all: 8)) }
        }
        let app = try app(screen)
        defer { app.host.setRootController(nil) }
        XCTAssertEqual(button.frame.width, 60, "not stretched to the screen's width")
    }

    func testAListWithNoHeightInAStackSaysWhy() async throws {
        let source = PlainRows()
        let list = ListNode()
        list.dataSource = source
        let screen = ScreenNode(body: list) { title, body in VStack(alignItems: .stretch) { title; body } }
        let app = try app(screen)
        defer { app.host.setRootController(nil); withExtendedLifetime(source) {} }
        XCTAssertEqual(list.frame.height, 0)
        let diagnostic = try XCTUnwrap(list.diagnostics.first { $0.kind == .showsNothing }, "\(list.diagnostics)")
        XCTAssertTrue(diagnostic.message.contains("0 pt tall"), diagnostic.message)
        XCTAssertTrue(diagnostic.message.contains("flexGrow(1)"), diagnostic.message)
        app.frame()
        XCTAssertEqual(list.diagnostics.count { $0.kind == .showsNothing }, 1, "said once")
    }

    func testAListWhoseDataSourceWasNeverSetOrLetGoSaysWhy() async throws {
        let list = ListNode()
        let screen = ScreenNode(body: list) { title, body in VStack(alignItems: .stretch) { title; body.flexGrow(1) } }
        let app = try app(screen)
        defer { app.host.setRootController(nil) }
        XCTAssertTrue(list.diagnostics.contains { $0.kind == .showsNothing && $0.message.contains("no data source") },
                      "\(list.diagnostics)")

        let other = ListNode()
        do {
            let source = PlainRows()
            other.dataSource = source
        }
        XCTAssertNil(other.dataSource, "held weakly, and let go")
        let second = ScreenNode(body: other) { title, body in VStack(alignItems: .stretch) { title; body.flexGrow(1) } }
        let app2 = try self.app(second)
        defer { app2.host.setRootController(nil) }
        XCTAssertTrue(other.diagnostics.contains { $0.kind == .showsNothing && $0.message.contains("let go") },
                      "\(other.diagnostics)")
    }

    func testACollectionWhoseDataSourceWasLetGoSaysWhy() async throws {
        let grid = CollectionNode()
        do {
            let source = SquareSource()
            grid.dataSource = source
        }
        let screen = ScreenNode(body: grid) { title, body in VStack(alignItems: .stretch) { title; body.flexGrow(1) } }
        let app = try app(screen)
        defer { app.host.setRootController(nil) }
        XCTAssertTrue(grid.diagnostics.contains { $0.kind == .showsNothing && $0.message.contains("collection") },
                      "said on the collection: \(grid.diagnostics)")
    }
}
