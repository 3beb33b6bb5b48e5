import Compositor
import FoundationEssentials
import Glibc
import Dispatch

extension Node {
    /// True when this node draws its whole subtree into its own bitmap. - Thread: any
    var isRasterizing: Bool { state.withLock { $0.shouldRasterizeDescendants } }

    /// The nearest ancestor that rasterizes this node into its own bitmap, if any. - Thread: any
    var rasterizingAncestor: Node? {
        var ancestor = supernode
        var found: Node?
        while let current = ancestor {
            if current.isRasterizing { found = current }
            ancestor = current.supernode
        }
        return found
    }

    var isRasterizedByAncestor: Bool { rasterizingAncestor != nil }

    /// The subtree flattened into one draw on one canvas: the node's background and own drawing,
    /// then each visible descendant's background and drawing at its frame, in pre-order. Each
    /// descendant draws straight into its region of the canvas (`BitmapContext.drawing(in:)`); only
    /// one drawn translucent (opacity below 1) gets a canvas of its own, blended in at its opacity.
    @MainActor
    func makeRasterizedClosure(own: (@Sendable (inout BitmapContext, DrawInfo) -> Void)?, background: Color?,
                               radii: CornerRadii) -> @Sendable (DrawInfo) -> Bitmap? {
        struct Part: Sendable {
            var frame: Rect
            var opacity: Double
            var background: Color?
            var radii: CornerRadii
            var draw: (@Sendable (inout BitmapContext, DrawInfo) -> Void)?
        }
        var parts: [Part] = []
        func collect(_ node: Node, origin: Point, opacity: Double) {
            for child in node.subnodes {
                let s = child.state.withLock { $0 }
                guard !s.isHidden, s.opacity > 0 else { continue }
                let frame = s.frame.sanitized
                let placed = frame.offsetBy(dx: origin.x, dy: origin.y)
                let childOpacity = opacity * min(1, s.opacity)
                let childRadii = CornerRadii(s.cornerRadius, corners: s.maskedCorners).clamped(to: frame.size)
                let drawing = (child as? any NodeDrawing)?.makeDrawIntoClosure()
                parts.append(Part(frame: placed, opacity: childOpacity, background: s.backgroundColor,
                                  radii: childRadii, draw: drawing))
                collect(child, origin: placed.origin, opacity: childOpacity)
            }
        }
        collect(self, origin: .zero, opacity: 1)
        let collected = parts
        return { info in
            guard var context = try? BitmapContext(size: info.bounds.size, scale: info.scale) else { return nil }
            let bounds = context.bounds
            if !radii.isZero { context.clip(toRoundedRect: bounds, radii: radii) }
            if let background { context.fill(bounds, color: background) }
            own?(&context, info)
            for part in collected {
                if info.isCancelled() { return nil }
                guard !part.frame.isEmpty else { continue }
                if let color = part.background {
                    context.fillRoundedRect(part.frame, radii: part.radii, color: color.withAlphaMultiplied(by: part.opacity))
                }
                guard let draw = part.draw else { continue }
                let partInfo = DrawInfo(bounds: Rect(origin: .zero, size: part.frame.size), scale: info.scale,
                                        isCancelled: info.isCancelled)
                if part.opacity >= 1 {
                    context.drawing(in: part.frame) { region in
                        if !part.radii.isZero { region.clip(toRoundedRect: region.bounds, radii: part.radii) }
                        draw(&region, partInfo)
                    }
                } else if var layer = try? BitmapContext(size: part.frame.size, scale: info.scale) {
                    // Translucent: drawn whole first, then blended in once at its opacity.
                    draw(&layer, partInfo)
                    context.saveClip()
                    if !part.radii.isZero { context.clip(toRoundedRect: part.frame, radii: part.radii) }
                    context.draw(layer.makeBitmap(), in: part.frame, opacity: part.opacity)
                    context.restoreClip()
                }
            }
            return info.isCancelled() ? nil : context.makeBitmap()
        }
    }
}
