import Compositor
import Foundation
import TesseraRandom
import XCTest
@testable import NodeRuntime

/// Properties over random trees from a seeded generator: no NaN, sizes within their ranges, children
/// inside their parents when nothing forces a minimum, the same layout for the same input, and the same
/// layout whether one thread measures or eight measure at once.
@MainActor
final class LayoutPropertyTests: XCTestCase {
    /// Which trees to make: anything, or only elements that never force a minimum size.
    enum Family { case everything, withoutMinimums }

    /// One random tree: the root node, every node made (in order, for comparing two builds) and a range.
    struct Tree {
        let root: SpecNode
        let nodes: [Node]
        let range: SizeRange
    }

    final class TreeBuilder {
        var random: SeededRandom
        let family: Family
        var nodes: [Node] = []

        init(seed: UInt64, family: Family) {
            random = SeededRandom(seed: seed)
            self.family = family
        }

        func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &random) < p }
        func number(_ range: ClosedRange<Double>) -> Double { (Double.random(in: range, using: &random) * 2).rounded() / 2 }
        func pick<T>(_ options: [T]) -> T { options[Int.random(in: 0..<options.count, using: &random)] }

        func make() -> Tree {
            let spec = element(depth: 4)
            let range = SizeRange(min: Size(width: chance(0.5) ? 0 : number(0...200), height: chance(0.5) ? 0 : number(0...200)),
                                  max: Size(width: chance(0.3) ? .infinity : number(200...400),
                                            height: chance(0.5) ? .infinity : number(200...400)))
            let rootSpec: any LayoutSpec = (spec as? any LayoutSpec) ?? WrapperSpec(children: [spec])
            let root = SpecNode("root") { _ in rootSpec }
            return Tree(root: root, nodes: nodes, range: range)
        }

        private func leaf() -> any LayoutElement {
            let node: Node
            if chance(0.5) {
                node = Box(number(0...80), number(0...60))
            } else {
                node = FakeText(Int(number(0...60)), characterWidth: number(3...7), lineHeight: number(8...14),
                                ascender: number(4...8), maximumLines: pick([0, 0, 1, 2]))
            }
            node.debugName = "n\(nodes.count)"
            nodes.append(node)
            return styled(node)
        }

        private func styled(_ element: any LayoutElement) -> any LayoutElement {
            var style = element.style
            if chance(0.2) { style.width = pick([.points(number(0...120)), .fraction(number(0...1) / 2 + 0.01)]) }
            if chance(0.2) { style.height = pick([.points(number(0...90)), .fraction(number(0...1) / 2 + 0.01)]) }
            if chance(0.15) { style.maxWidth = .points(number(0...150)) }
            if chance(0.15) { style.maxHeight = .points(number(0...150)) }
            if chance(0.2) { style.flexGrow = pick([1, 2]) }
            if chance(0.15) { style.flexBasis = pick([.points(number(0...100)), .fraction(0.25)]) }
            if chance(0.2) { style.alignSelf = pick([.start, .end, .center, .stretch]) }
            if family == .everything {
                if chance(0.15) { style.minWidth = .points(number(0...100)) }
                if chance(0.15) { style.minHeight = .points(number(0...80)) }
                if chance(0.3) { style.flexShrink = pick([0, 1, 3]) }
                if chance(0.1) { style.alignSelf = pick([.baselineFirst, .baselineLast]) }
                if chance(0.15) { style.spacingBefore = number(-5...10) }
                if chance(0.15) { style.spacingAfter = number(-5...10) }
                if chance(0.1) { style.ascender = number(0...20) }
                if chance(0.2) { style.layoutPosition = Point(x: number(-10...150), y: number(-10...150)) }
            } else {
                // Every child of a stack may shrink to nothing: no minimum anywhere.
                style.flexShrink = 1
            }
            return StyledElement(element).styled { $0 = style }
        }

        private func children(_ depth: Int) -> [any LayoutElement] {
            (0..<Int.random(in: 0...5, using: &random)).map { _ in element(depth: depth - 1) }
        }

        private func element(depth: Int) -> any LayoutElement {
            if depth == 0 || chance(0.2) { return leaf() }
            let spec: any LayoutElement
            switch (family, Int.random(in: 0..<12, using: &random)) {
            case (.everything, 0...3), (.withoutMinimums, 0...4):
                let everything = family == .everything
                spec = StackSpec(
                    direction: pick([.horizontal, .vertical]), reversed: chance(0.3),
                    spacing: everything ? number(-4...12) : 0,
                    justifyContent: pick([.start, .center, .end, .spaceBetween, .spaceAround]),
                    alignItems: everything ? pick([.start, .end, .center, .stretch, .baselineFirst, .baselineLast])
                        : pick([.start, .end, .center, .stretch]),
                    wraps: everything && chance(0.3), lineSpacing: number(0...8),
                    alignContent: pick([.start, .center, .end, .spaceBetween, .spaceAround, .stretch]),
                    children: children(depth))
            case (.everything, 4):
                spec = InsetSpec(EdgeInsets(top: number(-5...15), left: number(-5...15), bottom: number(0...15),
                                            right: number(0...15)), child: element(depth: depth - 1))
            case (_, 5):
                spec = CenterSpec(pick([.x, .y, .xy]), sizing: pick([[], .minimumWidth, .minimumHeight, .minimumSize]),
                                  child: element(depth: depth - 1))
            case (_, 6):
                spec = RelativeSpec(horizontal: pick([.start, .center, .end]), vertical: pick([.start, .center, .end]),
                                    child: element(depth: depth - 1))
            case (_, 7):
                spec = RatioSpec(ratio: pick([0.5, 1, 1.5, 2]), child: element(depth: depth - 1))
            case (_, 8):
                spec = OverlaySpec(child: element(depth: depth - 1), overlay: element(depth: depth - 1))
            case (_, 9):
                spec = BackgroundSpec(child: element(depth: depth - 1), background: element(depth: depth - 1))
            case (.everything, 10):
                spec = CornerSpec(child: element(depth: depth - 1), corner: element(depth: depth - 1),
                                  location: pick([.topLeft, .topRight, .bottomLeft, .bottomRight]),
                                  offset: Point(x: number(-5...5), y: number(-5...5)), wrapsCorner: chance(0.5))
            case (.everything, 11):
                spec = AbsoluteSpec(sizing: pick([.default, .sizeToFit]), children: children(depth))
            default:
                spec = WrapperSpec(children: children(depth))
            }
            return styled(spec)
        }
    }

    // MARK: Checks

    /// The layout as text with nodes named by their place in `nodes`: two builds of one seed compare equal.
    nonisolated private static func describe(_ layout: Layout, _ nodes: [Node]) -> String {
        let index = Dictionary(uniqueKeysWithValues: nodes.enumerated().map { (ObjectIdentifier($1), $0) })
        func text(_ layout: Layout) -> String {
            let children = layout.children.map { "\(index[ObjectIdentifier($0.node)] ?? -1)@\($0.frame){\(text($0.layout))}" }
            return "\(layout.size) \(String(describing: layout.firstBaseline)) \(String(describing: layout.lastBaseline)) [\(children.joined(separator: ", "))]"
        }
        return text(layout)
    }

    private func checkSound(_ layout: Layout, seed: UInt64, file: StaticString = #filePath, line: UInt = #line) {
        func visit(_ layout: Layout) {
            XCTAssertTrue(layout.size.width.isFinite && layout.size.height.isFinite && layout.size.width >= 0
                          && layout.size.height >= 0, "seed \(seed): size \(layout.size)", file: file, line: line)
            for baseline in [layout.firstBaseline, layout.lastBaseline].compactMap({ $0 }) {
                XCTAssertTrue(baseline.isFinite, "seed \(seed): baseline \(baseline)", file: file, line: line)
            }
            for child in layout.children {
                XCTAssertTrue(child.frame.isFinite, "seed \(seed): frame \(child.frame)", file: file, line: line)
                XCTAssertEqual(child.frame.size, child.layout.size, "seed \(seed): a child's layout fits its frame",
                               file: file, line: line)
                visit(child.layout)
            }
        }
        visit(layout)
    }

    func testRandomTreesAreSoundAndWithinTheirRange() async {
        for seed in UInt64(1)...400 {
            let tree = TreeBuilder(seed: seed, family: .everything).make()
            let layout = tree.root.layoutThatFits(tree.range)
            checkSound(layout, seed: seed)
            XCTAssertEqual(tree.range.clamp(layout.size), layout.size, "seed \(seed): the root stays in its range")
            XCTAssertFalse(layout.diagnostics.contains { $0.kind == .cycle || $0.kind == .duplicateNode },
                           "seed \(seed): \(layout.diagnostics)")
        }
    }

    func testWithoutMinimumsChildrenStayInsideTheirParents() async {
        let epsilon = 1e-6
        for seed in UInt64(1)...400 {
            let tree = TreeBuilder(seed: seed, family: .withoutMinimums).make()
            let layout = tree.root.layoutThatFits(tree.range)
            checkSound(layout, seed: seed)
            func visit(_ layout: Layout) {
                for child in layout.children {
                    let f = child.frame
                    XCTAssertTrue(f.minX >= -epsilon && f.minY >= -epsilon && f.maxX <= layout.size.width + epsilon
                                  && f.maxY <= layout.size.height + epsilon,
                                  "seed \(seed): \(child.node.debugName ?? "?") at \(f) outside \(layout.size)")
                    visit(child.layout)
                }
            }
            visit(layout)
        }
    }

    func testTheSameInputGivesTheSameLayout() async {
        for seed in UInt64(1)...200 {
            let first = TreeBuilder(seed: seed, family: .everything).make()
            let second = TreeBuilder(seed: seed, family: .everything).make()
            let firstLayout = first.root.layoutThatFits(first.range)
            XCTAssertEqual(Self.describe(firstLayout, first.nodes),
                           Self.describe(second.root.layoutThatFits(second.range), second.nodes),
                           "seed \(seed)")
            // Measured again from scratch (every cache dropped), the same tree gives the same layout.
            for node in first.nodes + [first.root] { node.setNeedsLayout() }
            XCTAssertEqual(first.root.layoutThatFits(first.range), firstLayout, "seed \(seed)")
        }
    }

    func testEightThreadsAtOnceMeasureWhatOneThreadMeasures() async {
        for seed in UInt64(1)...40 {
            let reference = TreeBuilder(seed: seed, family: .everything).make()
            let expected = Self.describe(reference.root.layoutThatFits(reference.range), reference.nodes)
            let shared = TreeBuilder(seed: seed, family: .everything).make()
            let box = UncheckedSendable(shared)
            let results = Locked<[String]>([])
            // All eight start on a cold cache and race to fill the same entries.
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                let tree = box.value
                let text = Self.describe(tree.root.layoutThatFits(tree.range), tree.nodes)
                results.withLock { $0.append(text) }
            }
            XCTAssertEqual(results.withLock { $0 }, Array(repeating: expected, count: 8), "seed \(seed)")
        }
    }
}
