import Compositor

// The focus ring: where the keyboard's focus is, drawn by the host over everything while focus moves
// by the keyboard (Tab, a screen reader), gone at the next press of the pointer (as a browser's
// :focus-visible).

/// A node that shows where the keyboard is inside it by itself (a menu's highlighted item), so the
/// host draws no ring around it. - Thread: main
@MainActor
protocol ShowsOwnFocus: AnyObject {}

extension NodeHost {
    /// The ring's width, and how far outside the node it lies, in points.
    static let focusRingWidth = 2.0
    static let focusRingOutset = 3.0

    /// Puts the ring around the focused node, or hides it. Runs every frame; a ring that does not
    /// move changes nothing the compositor sees.
    func updateFocusRing() {
        let focused = focusedNode.map { ($0 as? EditableTextNode)?.focusRingTarget ?? $0 }
        guard showsFocusRing, let node = focused, !(node is ShowsOwnFocus), let layer = node.layerIfLoaded,
              layer.superlayer != nil, node.interfaceState.contains(.visible) else {
            if let focusRing, !focusRing.isHidden { focusRing.isHidden = true }
            return
        }
        // Drawn where the node is: in the window, or on the surface of the overlay it is in, whose
        // root's coordinates are the window's too (see `Layer.frameInWindow`).
        var top = layer
        while let parent = top.superlayer { top = parent }
        let surface = overlayStack.first { $0.surfaceRootLayer === top }
        let ring = focusRing ?? makeFocusRing()
        let holder = surface?.surfaceRootLayer ?? rootLayer
        if ring.superlayer !== holder { _ = holder.addSublayer(ring) }
        let outset = Self.focusRingOutset, width = Self.focusRingWidth
        let around = layer.frameInWindow
        // Held inside the window (or the surface): a node as wide as it (a row) keeps its sides on screen.
        let area = surface?.surfaceFrame ?? Rect(origin: .zero, size: viewportSize)
        let minX = max(area.minX, around.minX - outset), minY = max(area.minY, around.minY - outset)
        let maxX = min(area.maxX, around.maxX + outset), maxY = min(area.maxY, around.maxY + outset)
        let frame = Rect(x: minX, y: minY, width: max(0, maxX - minX), height: max(0, maxY - minY))
        if ring.frame != frame {
            ring.frame = frame
            let bars = ring.sublayers
            bars[0].frame = Rect(x: 0, y: 0, width: frame.width, height: width)
            bars[1].frame = Rect(x: 0, y: frame.height - width, width: frame.width, height: width)
            bars[2].frame = Rect(x: 0, y: width, width: width, height: max(0, frame.height - 2 * width))
            bars[3].frame = Rect(x: frame.width - width, y: width, width: width, height: max(0, frame.height - 2 * width))
        }
        for bar in ring.sublayers where bar.backgroundColor != focusRingColor { bar.backgroundColor = focusRingColor }
        if ring.isHidden { ring.isHidden = false }
    }

    private func makeFocusRing() -> Layer {
        let ring = Layer(name: "focus-ring")
        ring.zPosition = 1_000_000
        for side in ["top", "bottom", "left", "right"] {
            let bar = Layer(name: "focus-ring-" + side)
            bar.backgroundColor = focusRingColor
            ring.addSublayer(bar)
        }
        focusRing = ring
        return ring
    }
}
