import Tessera
import Foundation

/// The layout engine's numbers: measuring chat-list cells on one thread with a cold cache, then again
/// with the cache warm, then after one label per cell changed.
///
/// The cells' labels are synthetic (glyph counts wrapped at a fixed advance) so the numbers are the
/// layout engine's own, not text shaping's: `--bench text` measures that.
/// - Thread: main
@MainActor
struct LayoutBenchmark {
    let cellCount: Int
    let rounds: Int
    /// The list's width in points.
    let width = 390.0

    /// A label that wraps by glyph count, like a text node with a fixed advance: it shrinks in a crowded
    /// stack, as text does by default.
    final class Label: Node, LayoutStyleDefaults, @unchecked Sendable {
        let glyphs: Int
        let advance: Double
        let lineHeight: Double
        let maximumLines: Int

        class var defaultLayoutStyle: LayoutStyle {
            var style = LayoutStyle()
            style.flexShrink = 1
            return style
        }

        init(glyphs: Int, advance: Double = 7, lineHeight: Double = 18, maximumLines: Int = 1) {
            self.glyphs = glyphs
            self.advance = advance
            self.lineHeight = lineHeight
            self.maximumLines = maximumLines
            super.init()
            style.ascender = lineHeight * 0.78
            style.descender = lineHeight * 0.22
        }

        override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
            let natural = Double(glyphs) * advance
            guard constrainedSize.width.isFinite, natural > constrainedSize.width, constrainedSize.width > 0 else {
                return Size(width: natural, height: glyphs > 0 ? lineHeight : 0)
            }
            let perLine = max(1, (constrainedSize.width / advance).rounded(.down))
            let lines = min(Double(maximumLines), (Double(glyphs) / perLine).rounded(.up))
            return Size(width: perLine * advance, height: lines * lineHeight)
        }
    }

    /// A chat row: avatar with an unread badge on its corner, title and time on one line, a preview of
    /// up to two lines below.
    final class Cell: Node, @unchecked Sendable {
        let avatar = Node()
        let badge: Node?
        let title: Label
        let time: Label
        let preview: Label

        init(index: Int) {
            title = Label(glyphs: 8 + (index * 7) % 40, lineHeight: 20)
            time = Label(glyphs: 5, lineHeight: 16)
            preview = Label(glyphs: 10 + (index * 13) % 120, lineHeight: 18, maximumLines: 2)
            badge = index % 3 == 0 ? Node() : nil
            super.init()
            avatar.preferredSize = Size(width: 52, height: 52)
            badge?.preferredSize = Size(width: 20, height: 20)
            for node in [avatar, title, time, preview] + (badge.map { [$0] } ?? []) { addSubnode(node) }
        }

        override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
            HStack(spacing: 12, alignItems: .center) {
                if let badge {
                    avatar.corner(badge, at: .topRight, offset: Point(x: -4, y: 4))
                } else {
                    avatar
                }
                VStack(spacing: 3) {
                    HStack(spacing: 6, alignItems: .baselineFirst) { title; Spacer(); time.flexShrink(0) }
                    preview
                }
                .flexGrow(1).flexShrink(1)
            }
            .inset(EdgeInsets(top: 10, left: 12, bottom: 10, right: 12))
        }
    }

    struct Report {
        var cells = 0
        /// Per round, microseconds of the measuring thread's CPU time per cell: what the engine costs,
        /// unaffected by other processes taking the core (the wall-clock figures are beside it).
        var cold: [Double] = [], warm: [Double] = [], changed: [Double] = []
        var coldWall: [Double] = [], warmWall: [Double] = []
        var diagnostics = 0


        var warmRatio: Double { zip(warm, cold).map { $0 / $1 }.median() }

        var table: String {
            var lines = ["layout benchmark (one thread, median of \(cold.count) rounds of \(cells) chat cells; CPU time, wall clock in brackets; "
                         + "\(BenchmarkOutput.noRenderer))"]
            lines.append(String(format: "  first pass, cache cold:   %6.2f µs per cell [%.2f] (target ≤ 20 µs)",
                                cold.median(), coldWall.median()))
            lines.append(String(format: "  second pass, cache warm:  %6.3f µs per cell [%.3f], %.4f of the first (target ≤ 0.1)",
                                warm.median(), warmWall.median(), warmRatio))
            lines.append(String(format: "  after one label changed:  %6.2f µs per cell (the other leaves' layouts reused)",
                                changed.median()))
            lines.append("  diagnostics: \(diagnostics)")
            return lines.joined(separator: "\n")
        }
    }

    func run() -> Report {
        let range = SizeRange(min: Size(width: width, height: 0), max: Size(width: width, height: .infinity))
        // Brings the code and the allocator up to speed before anything is timed.
        for cell in (0..<500).map({ Cell(index: $0) }) { _ = cell.layoutThatFits(range) }

        var report = Report(cells: cellCount)
        for _ in 0..<rounds {
            let cells = (0..<cellCount).map { Cell(index: $0) }
            func pass() -> (cpu: Double, wall: Double) {
                let wallStart = MonotonicClock.nanoseconds(), cpuStart = ThreadCPUClock.nanoseconds()
                var diagnostics = 0
                for cell in cells { diagnostics += cell.layoutThatFits(range).diagnostics.count }
                let cpu = ThreadCPUClock.nanoseconds() &- cpuStart, wall = MonotonicClock.nanoseconds() &- wallStart
                report.diagnostics = diagnostics
                return (Double(cpu) / 1000 / Double(cellCount), Double(wall) / 1000 / Double(cellCount))
            }
            let cold = pass()
            report.cold.append(cold.cpu)
            report.coldWall.append(cold.wall)
            let warm = pass()
            report.warm.append(warm.cpu)
            report.warmWall.append(warm.wall)
            for cell in cells { cell.title.setNeedsLayout() }
            report.changed.append(pass().cpu)
        }
        return report
    }
}
