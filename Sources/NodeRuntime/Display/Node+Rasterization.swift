import Compositor
import Foundation

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

    /// The subtree flattened into one draw: this node's own drawing, then each visible descendant's
    /// drawing or background at its frame, with opacity, in pre-order.
    func makeRasterizedClosure(own: (@Sendable (DrawInfo) -> Bitmap?)?, background: Color?,
                                       radii: CornerRadii) -> @Sendable (DrawInfo) -> Bitmap? {
        struct Part: Sendable {
            var frame: Rect
            var opacity: Double
            var background: Color?
            var radii: CornerRadii
            var draw: (@Sendable (DrawInfo) -> Bitmap?)?
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
                let drawing = (child as? any NodeDrawing)?.makeDrawClosure(bake: nil)
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
            if let own, let bitmap = own(info) { context.draw(bitmap, in: bounds) }
            for part in collected {
                if info.isCancelled() { return nil }
                guard !part.frame.isEmpty else { continue }
                if let color = part.background {
                    context.fillRoundedRect(part.frame, radii: part.radii, color: color.withAlphaMultiplied(by: part.opacity))
                }
                if let draw = part.draw,
                   let bitmap = draw(DrawInfo(bounds: Rect(origin: .zero, size: part.frame.size), scale: info.scale,
                                              isCancelled: info.isCancelled)) {
                    context.saveClip()
                    if !part.radii.isZero { context.clip(toRoundedRect: part.frame, radii: part.radii) }
                    context.draw(bitmap, in: part.frame, opacity: part.opacity)
                    context.restoreClip()
                }
            }
            return info.isCancelled() ? nil : context.makeBitmap()
        }
    }

}
