import Tessera
import Foundation

/// `gallery --bench rows`: the workers' cost of drawing what chat screens are made of, in µs of
/// worker time per draw: a message bubble with a tail (an image node cut to its shape), a round
/// avatar, and the app's chat row (`ChatRowNode`) rasterized whole into one bitmap, twice: the dataset's
/// first chat (photo avatar, title, time, a one-line preview) and its sixth (initials, an unread badge,
/// a two-line preview). Each is drawn `rounds` times through the
/// runtime (setNeedsDisplay, frames until committed) on SDL's dummy video driver at 2x, whatever
/// `--renderer` says: the figure is the scheduler's completed work time over the draws, which no
/// renderer takes part in.
/// - Thread: main
@MainActor
struct RowDrawBenchmark {
    let assets: URL
    let rounds: Int

    func run() throws -> String {
        let data = try ChatData(assets: assets)
        let harness = try BenchmarkHost(output: BenchmarkOutput(), title: "rows", size: Size(width: 600, height: 400), scale: 2)
        defer { harness.tearDown() }
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
        let row = ChatRowNode(ChatRowNode.Model(data: data, row: 0))
        row.frame = Rect(x: 0, y: 150, width: 600, height: ChatRowNode.height)
        // The dataset's sixth chat: initials instead of a photo, an unread badge, a two-line preview.
        let initialsRow = ChatRowNode(ChatRowNode.Model(data: data, row: 5))
        initialsRow.frame = Rect(x: 0, y: 240, width: 600, height: ChatRowNode.height)
        for node in [bubble, avatar, row, initialsRow] as [Node] { root.addSubnode(node) }
        harness.show(root)
        row.layoutIfNeeded()
        initialsRow.layoutIfNeeded()
        func settle() { harness.settle(frames: 3) }
        settle()
        let scheduler = harness.scheduler
        var lines = ["row draw benchmark (release build, 2x, worker µs per draw, median of 5 batches of \(rounds) draws)"]
        for (name, node) in [("bubble with a tail, 320×120 pt", bubble as Node), ("round avatar, 52×52 pt", avatar),
                             ("chat row rasterized whole, 600×76 pt", row),
                             ("chat row with initials and a badge, 600×76 pt", initialsRow)] {
            var perDraw: [Double] = []
            for _ in 0..<5 {
                let before = scheduler.statistics.total.workMillisecondsCompleted
                for _ in 0..<rounds {
                    node.setNeedsDisplay()
                    settle()
                }
                let after = scheduler.statistics.total.workMillisecondsCompleted
                perDraw.append((after - before) * 1000 / Double(rounds))
            }
            perDraw.sort()
            lines.append(String(format: "  %@: %8.1f µs", name as NSString, perDraw[perDraw.count / 2]))
        }
        return lines.joined(separator: "\n")
    }
}
