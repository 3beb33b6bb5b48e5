import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// Layout as nodes use it: the cache and its invalidation, applying a layout, subnodes that follow the
/// spec, measuring in the background, the builder.
@MainActor
final class LayoutNodeTests: XCTestCase {
    // MARK: Cache

    func testASecondMeasurementComesFromTheCache() async {
        let a = Box(40, 20, "a"), b = Box(60, 30, "b")
        let cell = SpecNode { _ in HStack { a; b } }
        let first = cell.layoutThatFits(upTo(200, 100))
        let counts = (cell.specCount, a.measureCount, b.measureCount)
        let second = cell.layoutThatFits(upTo(200, 100))
        XCTAssertEqual(second, first)
        XCTAssertTrue(counts == (cell.specCount, a.measureCount, b.measureCount), "nothing measured again")
        XCTAssertEqual(cell.specCount, 1)
    }

    func testEachRangeIsCachedSeparately() async {
        let a = Box(40, 20, "a")
        let cell = SpecNode { _ in HStack { a } }
        _ = cell.layoutThatFits(upTo(200, 100))
        _ = cell.layoutThatFits(upTo(300, 100))
        XCTAssertEqual(cell.specCount, 2)
        _ = cell.layoutThatFits(upTo(200, 100))
        _ = cell.layoutThatFits(upTo(300, 100))
        XCTAssertEqual(cell.specCount, 2)
    }

    func testSetNeedsLayoutBubblesToTheAncestorsOnly() async {
        let leaf = Box(10, 10, "leaf"), sibling = Box(20, 20, "sibling")
        let inner = SpecNode("inner", manages: false) { _ in HStack { leaf } }
        inner.addSubnode(leaf)
        let root = SpecNode("root", manages: false) { _ in VStack(alignItems: .start) { inner; sibling } }
        root.addSubnode(inner)
        root.addSubnode(sibling)
        _ = root.layoutThatFits(upTo(100, 100))
        let before = (root.specCount, inner.specCount, leaf.measureCount, sibling.measureCount)
        leaf.setNeedsLayout()
        _ = root.layoutThatFits(upTo(100, 100))
        XCTAssertEqual(root.specCount, before.0 + 1, "the root is measured again")
        XCTAssertEqual(inner.specCount, before.1 + 1, "so is the parent of the changed node")
        XCTAssertGreaterThan(leaf.measureCount, before.2)
        XCTAssertEqual(sibling.measureCount, before.3, "the sibling's cached layout is reused")
    }

    /// A leaf that invalidates itself while measuring, once: the result is returned but not kept.
    final class SelfInvalidatingNode: Node, @unchecked Sendable {
        var invalidations = 1
        var measurements = 0
        override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
            measurements += 1
            if invalidations > 0 {
                invalidations -= 1
                setNeedsLayout()
            }
            return Size(width: 5, height: 5)
        }
    }

    func testALayoutMeasuredAcrossAnInvalidationIsNotKept() async {
        let node = SelfInvalidatingNode()
        XCTAssertEqual(node.layoutThatFits(upTo(50, 50)).size, size(5, 5))
        _ = node.layoutThatFits(upTo(50, 50))
        _ = node.layoutThatFits(upTo(50, 50))
        XCTAssertEqual(node.measurements, 2)
    }

    func testStyleChangesInvalidate() async {
        let a = Box(40, 20, "a")
        let cell = SpecNode { _ in HStack(alignItems: .start) { a } }
        a.style.flexGrow = 0  // first use: no change, the cache stays empty either way
        cell.addSubnode(a)
        XCTAssertEqual(cell.layoutThatFits(exactly(100, 50)).frame(of: a), rect(0, 0, 40, 20))
        a.style.flexGrow = 1
        XCTAssertEqual(cell.layoutThatFits(exactly(100, 50)).frame(of: a), rect(0, 0, 100, 20))
    }

    // MARK: Applying

    func testLayoutIfNeededAppliesNestedLayoutsParentsFirst() async {
        let x = Box(10, 10, "x"), y = Box(10, 10, "y"), footer = Box(30, 15, "footer")
        let log = EventLog()
        let header = SpecNode("header") { _ in HStack(justifyContent: .spaceBetween) { x; y } }
        let root = SpecNode("root") { _ in VStack(spacing: 5) { header; footer }.inset(10) }
        header.onLayout = { log.record("header") }
        root.onLayout = { log.record("root") }
        root.frame = rect(0, 0, 200, 100)
        root.layoutIfNeeded()
        XCTAssertEqual(header.frame, rect(10, 10, 180, 10))
        XCTAssertEqual(footer.frame, rect(10, 25, 180, 15))
        XCTAssertEqual(x.frame, rect(0, 0, 10, 10))
        XCTAssertEqual(y.frame, rect(170, 0, 10, 10))
        XCTAssertEqual(log.names, ["root", "header"])
        XCTAssertTrue(root.hasCachedLayout(for: exactly(200, 100)))
    }

    func testAutomaticSubnodesFollowTheSpec() async {
        let a = Box(10, 10, "a"), b = Box(10, 10, "b"), c = Box(10, 10, "c")
        let showsA = Locked(true)
        let root = SpecNode { _ in
            HStack { if showsA.withLock({ $0 }) { a } else { c }; b }
        }
        root.frame = rect(0, 0, 100, 20)
        root.layoutIfNeeded()
        XCTAssertTrue(root.subnodes.elementsEqual([a, b], by: ===))
        showsA.withLock { $0 = false }
        root.setNeedsLayout()
        root.layoutIfNeeded()
        XCTAssertTrue(root.subnodes.elementsEqual([b, c], by: ===) || root.subnodes.elementsEqual([c, b], by: ===))
        XCTAssertNil(a.supernode)
        XCTAssertEqual(c.frame, rect(0, 0, 10, 20))
        XCTAssertEqual(b.frame, rect(10, 0, 10, 20))
    }

    func testNewSubnodesGoInSpecOrder() async {
        let a = Box(10, 10, "a"), b = Box(10, 10, "b"), c = Box(10, 10, "c")
        let includesB = Locked(false)
        let root = SpecNode { _ in HStack { a; if includesB.withLock({ $0 }) { b }; c } }
        root.frame = rect(0, 0, 100, 20)
        root.layoutIfNeeded()
        includesB.withLock { $0 = true }
        root.setNeedsLayout()
        root.layoutIfNeeded()
        XCTAssertTrue(root.subnodes.elementsEqual([a, b, c], by: ===))
    }

    func testASpecMayPlaceTheSubnodeOfANodeItPlaces() async {
        for manages in [false, true] {
            let capsule = Node(), count = Box(10, 8, "count"), title = Box(50, 10, "title")
            capsule.addSubnode(count)
            let cell = SpecNode("cell", manages: manages) { _ in
                HStack(spacing: 4, alignItems: .start) {
                    title
                    count.inset(EdgeInsets(top: 2, left: 6, bottom: 2, right: 6)).background(capsule)
                }
            }
            if !manages {
                cell.addSubnode(title)
                cell.addSubnode(capsule)
            }
            XCTAssertEqual(cell.layoutThatFits(exactly(200, 40)).diagnostics, [])
            cell.frame = rect(0, 0, 200, 40)
            cell.layoutIfNeeded()
            XCTAssertEqual(capsule.frame, rect(54, 0, 22, 12))
            XCTAssertEqual(count.frame, rect(6, 2, 10, 8), "in the capsule's coordinates")
            XCTAssertTrue(cell.subnodes.elementsEqual([title, capsule], by: ===))
            XCTAssertTrue(count.supernode === capsule)
        }
    }

    func testHostLaysTheRootOutAgainAfterAChildChanges() async {
        let (host, _) = makeHost(width: 200, height: 100)
        let short = FakeText(10, "short"), long = FakeText(20, "long"), other = Box(20, 20, "other")
        let useLong = Locked(false)
        let root = SpecNode { _ in HStack(alignItems: .start) { useLong.withLock { $0 } ? long : short; other } }
        host.setRootNode(root)
        XCTAssertEqual(other.frame, rect(50, 0, 20, 20))
        useLong.withLock { $0 = true }
        other.setNeedsLayout()
        host.runFrame(time: 1, events: [])
        // Measured in the background: this frame still shows the old layout…
        XCTAssertEqual(other.frame, rect(50, 0, 20, 20))
        Node.backgroundLayoutQueue.sync(flags: .barrier) {}
        // …and a later frame applies the new one whole.
        host.runFrame(time: 2, events: [])
        XCTAssertEqual(other.frame, rect(100, 0, 20, 20))
        XCTAssertTrue(long.supernode === root)
        XCTAssertNil(short.supernode)
        host.setRootNode(nil)
    }

    // MARK: Background

    private func waitForBackgroundLayout() {
        Node.backgroundLayoutQueue.sync(flags: .barrier) {}
    }

    func testLayoutInBackgroundIsMeasuredOffTheUIThreadAndAppliedInOneDrain() async {
        let a = Box(40, 20, "a"), b = Box(60, 30, "b")
        let measuredOnUIThread = Locked<[Bool]>([])
        let root = SpecNode { _ in
            measuredOnUIThread.withLock { $0.append(UIThread.isCurrent) }
            return HStack(alignItems: .start) { a; b }
        }
        root.frame = rect(0, 0, 200, 50)
        var completed = false
        root.layoutInBackground { completed = true }
        waitForBackgroundLayout()
        XCTAssertEqual(measuredOnUIThread.withLock { $0 }, [false])
        XCTAssertEqual(b.frame, .zero, "nothing is applied before the UI thread drains its queue")
        root.runtime.mainQueue.drain()
        XCTAssertTrue(completed)
        XCTAssertEqual(a.frame, rect(0, 0, 40, 20))
        XCTAssertEqual(b.frame, rect(40, 0, 60, 30))
    }

    /// A result measured across an invalidation is still newer than what is shown: it is applied,
    /// and the tree is measured again (never dropped, so a tree invalidated every frame is not starved).
    func testABackgroundLayoutInvalidatedBeforeItIsAppliedIsAppliedAndMeasuredAgain() async {
        let a = Box(40, 20, "a"), b = Box(60, 30, "b")
        let reversed = Locked(false)
        let root = SpecNode { _ in HStack(alignItems: .start, reversed: reversed.withLock { $0 }) { a; b } }
        root.frame = rect(0, 0, 100, 30)
        root.layoutInBackground()
        waitForBackgroundLayout()
        reversed.withLock { $0 = true }
        root.setNeedsLayout()
        root.runtime.mainQueue.drain()
        XCTAssertEqual(a.frame, rect(0, 0, 40, 20), "the result measured before the change is shown meanwhile")
        waitForBackgroundLayout()
        root.runtime.mainQueue.drain()
        XCTAssertEqual(a.frame, rect(60, 0, 40, 20))
        XCTAssertEqual(b.frame, rect(0, 0, 60, 30))
    }

    func testABackgroundLayoutForARangeResizesTheNode() async {
        let a = Box(40, 20, "a")
        let root = SpecNode { _ in HStack { a }.inset(5) }
        root.frame = rect(7, 7, 0, 0)
        root.layoutInBackground(for: upTo(300, 300))
        waitForBackgroundLayout()
        root.runtime.mainQueue.drain()
        XCTAssertEqual(root.frame, rect(7, 7, 50, 30))
        XCTAssertEqual(a.frame, rect(5, 5, 40, 20))
    }

    // MARK: Builder

    func testBuilderControlFlow() async {
        let nodes = (0..<6).map { Box(10, 10, "n\($0)") }
        let missing: Box? = nil
        let present: Box? = nodes[2]
        for flag in [true, false] {
            let spec = HStack(alignItems: .start) {
                if flag { nodes[0] } else { nodes[1] }
                missing
                present
                for node in nodes[3...4] { node }
                [nodes[5]]
            }
            let layout = layOut(spec)
            let expected: [Box] = [flag ? nodes[0] : nodes[1], nodes[2], nodes[3], nodes[4], nodes[5]]
            XCTAssertTrue(layout.children.map(\.node).elementsEqual(expected, by: ===))
            XCTAssertEqual(frames(layout).map(\.minX), [0, 10, 20, 30, 40])
        }
    }

    func testACellReadsLikeItsShape() async {
        let avatar = Box(40, 40, "avatar"), badge = Box(12, 12, "badge")
        let title = FakeText(12, "title"), time = FakeText(5, "time"), preview = FakeText(80, maximumLines: 2, "preview")
        let cell = VStack(spacing: 4) {
            HStack(spacing: 6) { title.flexGrow(1); time }
            HStack(spacing: 8, alignItems: .start) { avatar.corner(badge, at: .topRight); preview.flexShrink(1) }
        }
        let layout = layOut(cell, SizeRange(min: size(200, 0), max: size(200, .infinity)))
        // title grows to push time to the end; the preview wraps onto two lines of 30 glyphs.
        assertLayout(layout, size: size(200, 54), frames: [
            rect(0, 0, 169, 10), rect(175, 0, 25, 10),
            rect(0, 14, 40, 40), rect(34, 8, 12, 12), rect(48, 14, 152, 20),
        ])
    }

    func testDiagnosticsOfNodesReachTheirAncestors() async {
        let bad = Box(10, 10, "bad")
        bad.style.width = .points(.nan)
        let inner = SpecNode("inner") { _ in HStack { bad } }
        let outer = SpecNode("outer") { _ in VStack { inner } }
        let layout = outer.layoutThatFits(upTo(100, 100))
        XCTAssertEqual(layout.diagnostics.map(\.kind), [.invalidDimension])
        XCTAssertEqual(layout.diagnostics.first?.subject, "Box 'bad'")
    }

    func testAWarmPassMeasuresNothing() async {
        let leaves = (0..<50).map { _ in (Box(30, 30), FakeText(40)) }
        let cells = leaves.map { leaf in SpecNode { _ in HStack(spacing: 4) { leaf.0; leaf.1 } } }
        let range = SizeRange(min: size(120, 0), max: size(120, .infinity))
        let cold = cells.map { $0.layoutThatFits(range) }
        let counts = cells.map(\.specCount) + leaves.map(\.0.measureCount)
        let warm = cells.map { $0.layoutThatFits(range) }
        XCTAssertEqual(cold, warm)
        XCTAssertEqual(cells.map(\.specCount) + leaves.map(\.0.measureCount), counts)
    }
}
