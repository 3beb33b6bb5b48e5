import Compositor

/// The range overlay, for debugging: a strip along the list's right edge that maps every row with a
/// node or a measure job (the measure range) onto the list's height, each row tinted by its interface
/// state, with the viewport outlined; and a red tint over visible rows that are not ready (the
/// checkerboard). Plain layers above the list's content, updated once a frame while enabled.
/// - Thread: main, every member.
@MainActor
final class ListRangeOverlay {
    static let stripWidth = 14.0
    static let visibleColor = Color(red: 52, green: 199, blue: 89, alpha: 230)
    static let displayColor = Color(red: 0, green: 122, blue: 255, alpha: 220)
    static let preloadColor = Color(red: 255, green: 159, blue: 10, alpha: 210)
    static let measureColor = Color(red: 142, green: 142, blue: 147, alpha: 200)
    static let pendingColor = Color(red: 72, green: 72, blue: 74, alpha: 160)
    static let notReadyTint = Color(red: 255, green: 59, blue: 48, alpha: 70)

    private var root: Layer?
    private var strip: Layer?
    private var viewportMarker: Layer?
    private var bars: [Layer] = []
    private var tints: [Layer] = []

    /// The color a row gets in the strip for its state.
    static func color(for state: InterfaceState, hasNode: Bool) -> Color {
        guard hasNode else { return pendingColor }
        if state.contains(.visible) { return visibleColor }
        if state.contains(.display) { return displayColor }
        if state.contains(.preload) { return preloadColor }
        return measureColor
    }

    func setEnabled(_ enabled: Bool, in list: ListNode) {
        guard list.isNodeLoaded else { return }
        if enabled {
            guard root == nil else { return }
            let root = Layer(name: "list-range-overlay")
            root.zPosition = 1_000
            let strip = Layer(name: "list-range-strip")
            strip.backgroundColor = Color(red: 0, green: 0, blue: 0, alpha: 140)
            let marker = Layer(name: "list-range-viewport")
            marker.backgroundColor = Color(red: 255, green: 255, blue: 255, alpha: 70)
            strip.addSublayer(marker)
            root.addSublayer(strip)
            list.layer.addSublayer(root)
            self.root = root
            self.strip = strip
            self.viewportMarker = marker
            update(for: list)
        } else {
            root?.removeFromSuperlayer()
            root = nil
            strip = nil
            viewportMarker = nil
            bars = []
            tints = []
        }
    }

    func update(for list: ListNode) {
        guard let root, let strip, let viewportMarker else { return }
        let size = list.bounds.size
        root.frame = Rect(origin: .zero, size: size)
        strip.frame = Rect(x: size.width - Self.stripWidth, y: 0, width: Self.stripWidth, height: size.height)

        // The strip spans the rows that have records, plus the viewport.
        let rows = list.records.keys
        let viewportTop = list.offset, viewportBottom = list.offset + size.height
        var spanTop = viewportTop, spanBottom = viewportBottom
        if let first = rows.min(), let last = rows.max() {
            spanTop = min(spanTop, list.geometry.offset(ofRow: first))
            spanBottom = max(spanBottom, list.geometry.offset(ofRow: last + 1))
        }
        let scale = spanBottom > spanTop ? size.height / (spanBottom - spanTop) : 0
        func mapped(_ y: Double) -> Double { (y - spanTop) * scale }

        var index = 0
        for record in list.records.values.sorted(by: { $0.row < $1.row }) {
            let bar = reusable(&bars, at: index, in: strip)
            let top = list.geometry.offset(ofRow: record.row)
            let height = list.geometry.heights[record.row]
            bar.frame = Rect(x: 2, y: mapped(top), width: Self.stripWidth - 4, height: max(1, height * scale - 1))
            bar.backgroundColor = Self.color(for: record.node?.interfaceState ?? [], hasNode: record.node != nil)
            bar.isHidden = false
            index += 1
        }
        for extra in bars[index...] { extra.isHidden = true }
        viewportMarker.frame = Rect(x: 0, y: mapped(viewportTop), width: Self.stripWidth,
                                    height: (viewportBottom - viewportTop) * scale)

        // Visible rows that are not ready get a tint.
        var tintIndex = 0
        if let visible = list.geometry.rows(overlapping: viewportTop, viewportBottom) {
            for row in visible where !(list.records[row].map(list.isRowReady) ?? false) {
                let tint = reusable(&tints, at: tintIndex, in: root)
                tint.frame = Rect(x: 0, y: list.geometry.offset(ofRow: row) - viewportTop,
                                  width: size.width - Self.stripWidth, height: list.geometry.heights[row])
                tint.backgroundColor = Self.notReadyTint
                tint.isHidden = false
                tintIndex += 1
            }
        }
        for extra in tints[tintIndex...] { extra.isHidden = true }
    }

    private func reusable(_ pool: inout [Layer], at index: Int, in parent: Layer) -> Layer {
        if index < pool.count { return pool[index] }
        let layer = Layer(name: "list-range-bar")
        parent.addSublayer(layer)
        pool.append(layer)
        return layer
    }
}
