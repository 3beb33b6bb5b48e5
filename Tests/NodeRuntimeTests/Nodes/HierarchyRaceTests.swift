import Compositor
import Foundation
import TesseraRandom
import XCTest
@testable import NodeRuntime

/// Hierarchy changes from several threads at once keep the tree a tree: a node is in at most one
/// parent's subnodes, its `supernode` is that parent, and no node is its own ancestor.
@MainActor
final class HierarchyRaceTests: XCTestCase {
    /// What is wrong with the tree over `nodes`; empty when it is a tree.
    private func problems(in nodes: [Node]) -> [String] {
        var problems: [String] = []
        var parentOf: [ObjectIdentifier: [Node]] = [:]
        for parent in nodes {
            let children = parent.subnodes
            var seen = Set<ObjectIdentifier>()
            for child in children {
                if !seen.insert(ObjectIdentifier(child)).inserted { problems.append("\(child.debugName ?? "?") twice in \(parent.debugName ?? "?")") }
                parentOf[ObjectIdentifier(child), default: []].append(parent)
            }
        }
        for node in nodes {
            let parents = parentOf[ObjectIdentifier(node)] ?? []
            if parents.count > 1 { problems.append("\(node.debugName ?? "?") is in \(parents.count) parents") }
            let supernode = node.supernode
            if let supernode, !parents.contains(where: { $0 === supernode }) {
                problems.append("\(node.debugName ?? "?")'s supernode \(supernode.debugName ?? "?") does not hold it")
            }
            if supernode == nil, let holder = parents.first {
                problems.append("\(holder.debugName ?? "?") holds \(node.debugName ?? "?"), which has no supernode")
            }
            // No cycle: the ancestors end within the node count.
            var ancestor = supernode
            var steps = 0
            while let current = ancestor, steps <= nodes.count {
                ancestor = current.supernode
                steps += 1
            }
            if steps > nodes.count { problems.append("\(node.debugName ?? "?") is its own ancestor") }
        }
        return problems
    }

    func testConcurrentMovesKeepTheTreeATree() async {
        let seed = UInt64.random(in: 0...UInt64.max)
        let nodes = (0..<24).map { index -> Node in
            let node = Node()
            node.debugName = "n\(index)"
            return node
        }
        let threads = 4
        let done = DispatchGroup()
        for thread in 0..<threads {
            done.enter()
            let threadSeed = seed &+ UInt64(thread)
            Thread.detachNewThread {
                var random = SeededRandom(seed: threadSeed)
                for _ in 0..<20_000 {
                    let node = nodes[Int.random(in: 0..<nodes.count, using: &random)]
                    switch Int.random(in: 0..<10, using: &random) {
                    case 0..<7: nodes[Int.random(in: 0..<nodes.count, using: &random)].addSubnode(node)
                    case 7..<9:
                        let parent = nodes[Int.random(in: 0..<nodes.count, using: &random)]
                        parent.insertSubnode(node, at: Int.random(in: 0..<4, using: &random))
                    default: node.removeFromSupernode()
                    }
                }
                done.leave()
            }
        }
        done.wait()
        let found = problems(in: nodes)
        XCTAssertEqual(found, [], "seed 0x\(String(seed, radix: 16)): \(found.prefix(5))")
        for node in nodes { XCTAssertLessThanOrEqual(node.subtree().count, nodes.count) }
    }
}
