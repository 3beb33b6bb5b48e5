import Compositor
import Foundation
import Testing
import TestSupport
@testable import NodeRuntime

/// A node that exists only inside the layout its parent's spec measured: its last reference is the
/// parent's cached layout.
final class MeasuredOnlyNode: Node, @unchecked Sendable {
    override func calculateSizeThatFits(_ constrainedSize: Size) -> Size { Size(width: 10, height: 10) }
}

/// A parent whose spec makes a fresh node every time it is measured.
final class FreshChildSpecNode: Node, @unchecked Sendable {
    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        HStack { MeasuredOnlyNode() }
    }
}

/// Something whose `deinit` takes a node's lock, as an app's object captured by a handler might.
final class ReadsANodeWhenFreed: Sendable {
    let node: Node
    init(_ node: Node) { self.node = node }
    deinit { _ = node.frame }
}

/// Objects are let go of after a lock is released, never inside it: a node (or anything) freed
/// inside a node's lock would run its `deinit`, which takes locks, inside that lock. Debug builds
/// check it (taking a lock while holding one traps, see `Locked`), so each path runs in a child
/// process that must exit cleanly.
@Suite struct ReleaseOutsideLocksExitTests {
    @Test func aNodeKeptAliveOnlyByACachedLayoutIsFreedOutsideTheLock() async {
        await #expect(processExitsWith: .success) {
            let parent = FreshChildSpecNode()
            _ = parent.layoutThatFits(.exactly(Size(width: 100, height: 20)))
            parent.setNeedsLayout()  // the cached layout, and the only reference to its node, goes
        }
    }

    @Test func aLayoutReplacedInTheCacheIsFreedOutsideTheLock() async {
        await #expect(processExitsWith: .success) {
            let parent = FreshChildSpecNode()
            // Five ranges: the fifth evicts the first layout the cache holds.
            for width in 1...5 { _ = parent.layoutThatFits(.exactly(Size(width: Double(width) * 10, height: 20))) }
        }
    }

    @Test func aReplacedLinkHandlerIsFreedOutsideTheTextLock() async {
        await #expect(processExitsWith: .success) {
            let text = TextNode("a link", attributes: TextAttributes())
            // The handler is the only owner of what it captures.
            text.linkTapHandler = { [captured = ReadsANodeWhenFreed(Node())] _ in _ = captured }
            text.linkTapHandler = nil  // the old handler, and what it captured, goes
        }
    }
}
