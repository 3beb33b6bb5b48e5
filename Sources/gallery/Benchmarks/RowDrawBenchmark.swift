import Compositor
import Foundation
import NodeRuntime

/// `gallery --bench rows`: the workers' cost of drawing what chat screens are made of, in µs of
/// worker time per draw: a message bubble with a tail (an image node cut to its shape), a round
/// avatar, and a chat row rasterized whole (avatar, title, time and a two-line preview drawn into one
/// bitmap). Each is drawn `rounds` times through the runtime (setNeedsDisplay, frames until committed)
/// in a headless window at 2x; the figure is the scheduler's completed work time over the draws.
/// - Thread: main
struct RowDrawBenchmark {
    let rounds: Int

    /// A chat row: avatar and texts, rasterized into one bitmap.
    final class Row: Node {
        let avatar = ImageNode()
        let title = TextNode("Laura del Moraleda", attributes: TextAttributes(font: TextFont(size: 15, isBold: true)))
        let time = TextNode("08:20", attributes: TextAttributes(font: TextFont(size: 13)))
        let preview = TextNode("Programas actividades afirmó saber cuba horas estudios. ¡Nos vemos mañana!",
                               attributes: TextAttributes(font: TextFont(size: 14)))
        override init() {
            super.init()
            backgroundColor = .white
            shouldRasterizeDescendants = true
            avatar.emptyColor = Color(rgb: 0x6AB0E0)
            avatar.imageCornerRadii = CornerRadii(26)
            preview.maximumNumberOfLines = 2
            for node in [avatar, title, time, preview] as [Node] { addSubnode(node) }
        }
        override func layout() {
            let width = bounds.width
            avatar.frame = Rect(x: 10, y: 12, width: 52, height: 52)
            title.frame = Rect(x: 74, y: 10, width: width - 140, height: 20)
            time.frame = Rect(x: width - 56, y: 12, width: 46, height: 18)
            preview.frame = Rect(x: 74, y: 32, width: width - 90, height: 40)
        }
    }

    func run() throws -> String {
        let size = Size(width: 600, height: 400)
        let backend = try SDLRenderBackend(.init(title: "rows", size: size, scale: 2, headless: true))
        let host = NodeHost(compositor: Compositor(backend: backend, scale: 2))
        let root = Node()
        let bubble = ImageNode()
        bubble.emptyColor = Color(rgb: 0xE3FEE0)
        bubble.imageCornerRadii = CornerRadii(14)
        bubble.bubbleTail = BubbleTail(side: .right, width: 6)
        bubble.frame = Rect(x: 200, y: 10, width: 320, height: 120)
        let avatar = ImageNode()
        avatar.emptyColor = Color(rgb: 0x6AB0E0)
        avatar.imageCornerRadii = CornerRadii(26)
        avatar.frame = Rect(x: 10, y: 10, width: 52, height: 52)
        let row = Row()
        row.frame = Rect(x: 0, y: 150, width: 600, height: 76)
        for node in [bubble, avatar, row] as [Node] { root.addSubnode(node) }
        host.setRootNode(root)
        row.layoutIfNeeded()
        var time = 0.0
        func settle() {
            for _ in 0..<3 {
                time += 1.0 / 60
                host.runFrame(time: time, events: [])
                host.runtime.scheduler.waitUntilIdle()
            }
        }
        settle()
        var lines = ["row draw benchmark (release build, 2x, worker µs per draw, median of 5 batches of \(rounds) draws)"]
        for (name, node) in [("bubble with a tail, 320×120 pt", bubble as Node), ("round avatar, 52×52 pt", avatar),
                             ("chat row rasterized whole, 600×76 pt", row)] {
            var perDraw: [Double] = []
            for _ in 0..<5 {
                let before = host.runtime.scheduler.statistics.total.workMillisecondsCompleted
                for _ in 0..<rounds {
                    node.setNeedsDisplay()
                    settle()
                }
                let after = host.runtime.scheduler.statistics.total.workMillisecondsCompleted
                perDraw.append((after - before) * 1000 / Double(rounds))
            }
            perDraw.sort()
            lines.append(String(format: "  %@: %8.1f µs", name as NSString, perDraw[perDraw.count / 2]))
        }
        return lines.joined(separator: "\n")
    }
}
