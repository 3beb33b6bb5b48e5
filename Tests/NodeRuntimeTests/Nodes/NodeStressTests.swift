import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Several threads build, configure and mutate nodes while the UI thread adds and removes them and
/// displays are scheduled and cancelled. Run under `swift test --sanitize=thread` to check the locking.
@MainActor
final class NodeStressTests: XCTestCase {
    func testThreadsMutateAndAddRemoveThousandNodesWhileDisplaying() async {
        let (host, _) = makeHost(width: 400, height: 400)
        let root = Node()
        host.setRootNode(root)
        let built = Locked<[UncheckedSendable<ColorNode>]>([])
        let live = Locked<[UncheckedSendable<ColorNode>]>([])
        let threadsDone = DispatchSemaphore(value: 0)
        let threadCount = 4, nodesPerThread = 250

        for thread in 0..<threadCount {
            Thread.detachNewThread {
                var generator = SystemRandomNumberGenerator()
                for i in 0..<nodesPerThread {
                    // Build a small subtree off the main thread.
                    let node = ColorNode(Color(red: UInt8(i % 256), green: UInt8(thread * 60), blue: 90))
                    node.frame = Rect(x: Double(i % 20) * 20, y: Double(i / 20) * 8, width: 18, height: 7)
                    node.isTransactionContainer = i % 3 == 0
                    if i % 4 == 0 {
                        let child = ColorNode(.white)
                        child.frame = Rect(x: 1, y: 1, width: 4, height: 4)
                        node.addSubnode(child)
                    }
                    built.withLock { $0.append(UncheckedSendable(node)) }
                    // Meanwhile mutate nodes that are already on screen.
                    let targets = live.withLock { list in
                        list.isEmpty ? [] : (0..<3).map { _ in list[Int.random(in: 0..<list.count, using: &generator)] }
                    }
                    for target in targets {
                        let node = target.value
                        switch Int.random(in: 0..<5, using: &generator) {
                        case 0: node.color = Color(red: UInt8.random(in: 0...255, using: &generator), green: 10, blue: 10)
                        case 1: node.opacity = Double.random(in: 0.2...1, using: &generator)
                        case 2: node.frame.size.width = Double.random(in: 4...18, using: &generator)
                        case 3: node.backgroundColor = Color(rgb: UInt32.random(in: 0...0xFFFFFF, using: &generator))
                        default: node.setNeedsDisplay()
                        }
                    }
                }
                threadsDone.signal()
            }
        }

        var time = 0.0
        var finishedThreads = 0
        var added = 0
        var removed: [ColorNode] = []
        var generator = SystemRandomNumberGenerator()
        while finishedThreads < threadCount || !built.withLock({ $0.isEmpty }) {
            while threadsDone.wait(timeout: .now()) == .success { finishedThreads += 1 }
            let batch = built.withLock { list -> [UncheckedSendable<ColorNode>] in
                defer { list.removeAll() }
                return list
            }
            for box in batch {
                root.addSubnode(box.value)
                added += 1
            }
            live.withLock { $0.append(contentsOf: batch) }
            // Remove a few random nodes from the screen.
            let victims = live.withLock { list -> [ColorNode] in
                guard list.count > 50 else { return [] }
                return (0..<5).map { _ in list.remove(at: Int.random(in: 0..<list.count, using: &generator)).value }
            }
            for victim in victims {
                victim.removeFromSupernode()
                removed.append(victim)
            }
            time += 1.0 / 60
            host.runFrame(time: time, events: [])
        }
        XCTAssertEqual(added, threadCount * nodesPerThread)

        settle(host, time: &time)
        Runtime.shared.scheduler.waitUntilIdle()
        settle(host, time: &time)
        for node in removed {
            XCTAssertEqual(node.interfaceState, [])
            XCTAssertNil(node.layer.contents, "a removed node shows nothing")
            XCTAssertNil(node.layer.superlayer)
        }
        // Every node still on screen shows its current colour, at its current size.
        for box in live.withLock({ $0 }) {
            let node = box.value
            XCTAssertEqual(node.layer.frame, node.frame)
            if !node.frame.sanitized.isEmpty {
                XCTAssertEqual(centreColor(node.layer), node.color, "layer shows the latest draw")
            }
        }
    }
}
