/// Triangles for a rounded rectangle drawn by the renderer itself (`CornerRoundingMode.compositorClip`).
///
/// Coordinates are output pixels. Texture coordinates map the rectangle to 0...1.
/// - Thread: any (pure functions)
enum RoundedGeometry {
    struct Mesh {
        var vertices: [GeometryVertex] = []
        var indices: [Int32] = []
        var isEmpty: Bool { indices.isEmpty }
    }

    /// Convex pieces that together cover the rounded rectangle, with colours and texture coordinates:
    /// axis-aligned quads for everything outside the four corner squares (the software renderer draws
    /// such quads as exact rectangle copies), a fan for each rounded corner, and a one-pixel fringe along
    /// each arc that fades to transparent, so curved edges come out anti-aliased. Straight edges are not
    /// feathered: they stay as crisp as a plain texture copy.
    static func pieces(_ unsnapped: Rect, radii unsnappedRadii: CornerRadii, color: Color) -> [[GeometryVertex]] {
        // Whole pixels for the rectangle and the radii: strips are drawn as rectangle copies and fans as
        // triangles, and the two rasterize a fractional shared edge differently, leaving a seam.
        let x0 = PixelGeometry.nearestWhole(unsnapped.minX), y0 = PixelGeometry.nearestWhole(unsnapped.minY)
        let rect = Rect(x: x0, y: y0, width: PixelGeometry.nearestWhole(unsnapped.maxX) - x0,
                        height: PixelGeometry.nearestWhole(unsnapped.maxY) - y0)
        guard rect.width > 0, rect.height > 0 else { return [] }
        let radii = unsnappedRadii.nearestWholePixels.clamped(to: rect.size)
        func vertex(_ x: Double, _ y: Double, _ c: Color) -> GeometryVertex {
            GeometryVertex(x: Float(x), y: Float(y), color: c,
                           u: Float(min(1, max(0, (x - rect.minX) / rect.width))),
                           v: Float(min(1, max(0, (y - rect.minY) / rect.height))))
        }
        func quad(_ x0: Double, _ y0: Double, _ x1: Double, _ y1: Double) -> [GeometryVertex]? {
            guard x1 > x0, y1 > y0 else { return nil }
            return [vertex(x0, y0, color), vertex(x1, y0, color), vertex(x1, y1, color), vertex(x0, y1, color)]
        }
        let r = radii
        var pieces: [[GeometryVertex]] = []

        // Horizontal strips between the corner squares' edges; each strip spans the rectangle minus
        // the corner squares that reach into it (clamped radii keep squares on one side from overlapping).
        let breaks = Set([rect.minY, rect.minY + r.topLeft, rect.minY + r.topRight,
                          rect.maxY - r.bottomLeft, rect.maxY - r.bottomRight, rect.maxY]).sorted()
        for (y0, y1) in zip(breaks, breaks.dropFirst()) where y1 > y0 {
            let middle = (y0 + y1) / 2
            var left = rect.minX, right = rect.maxX
            if middle < rect.minY + r.topLeft { left = rect.minX + r.topLeft }
            if middle > rect.maxY - r.bottomLeft { left = max(left, rect.minX + r.bottomLeft) }
            if middle < rect.minY + r.topRight { right = rect.maxX - r.topRight }
            if middle > rect.maxY - r.bottomRight { right = min(right, rect.maxX - r.bottomRight) }
            if let strip = quad(left, y0, right, y1) { pieces.append(strip) }
        }

        var transparent = color
        transparent.alpha = 0
        func corner(_ cx: Double, _ cy: Double, _ radius: Double, from start: Double) {
            guard radius > 0 else { return }
            let segments = min(32, max(2, Int((radius.squareRoot() * 2.5).rounded(.up))))
            let innerRadius = max(0, radius - 0.5), outerRadius = radius + 0.5
            var inner: [GeometryVertex] = [], outer: [GeometryVertex] = []
            for step in 0...segments {
                let angle = start + Double(step) / Double(segments) * (Double.pi / 2)
                let dx = cos(angle), dy = sin(angle)
                inner.append(vertex(cx + dx * innerRadius, cy + dy * innerRadius, color))
                outer.append(vertex(cx + dx * outerRadius, cy + dy * outerRadius, transparent))
            }
            pieces.append([vertex(cx, cy, color)] + inner)
            // The fringe's ends poke half a pixel past the straight edges; keep it inside the rectangle.
            for i in 0..<segments {
                let fringe = clip([inner[i], outer[i], outer[i + 1], inner[i + 1]], to: rect)
                if fringe.count >= 3 { pieces.append(fringe) }
            }
        }
        corner(rect.minX + r.topLeft, rect.minY + r.topLeft, r.topLeft, from: Double.pi)
        corner(rect.maxX - r.topRight, rect.minY + r.topRight, r.topRight, from: 1.5 * Double.pi)
        corner(rect.maxX - r.bottomRight, rect.maxY - r.bottomRight, r.bottomRight, from: 0)
        corner(rect.minX + r.bottomLeft, rect.maxY - r.bottomLeft, r.bottomLeft, from: 0.5 * Double.pi)
        return pieces
    }

    /// Clips a convex polygon to `rect`, interpolating colour and texture coordinates (Sutherland–Hodgman).
    /// An axis-aligned quad of uniform colour stays a quad in the same vertex order (top-left, top-right,
    /// bottom-right, bottom-left), which the software renderer recognises and draws as a rectangle copy.
    static func clip(_ polygon: [GeometryVertex], to rect: Rect) -> [GeometryVertex] {
        if polygon.count == 4, polygon[0].y == polygon[1].y, polygon[2].y == polygon[3].y,
           polygon[0].x == polygon[3].x, polygon[1].x == polygon[2].x, polygon[0].color == polygon[2].color {
            let a = polygon[0], c = polygon[2]
            let x0 = max(a.x, Float(rect.minX)), x1 = min(c.x, Float(rect.maxX))
            let y0 = max(a.y, Float(rect.minY)), y1 = min(c.y, Float(rect.maxY))
            guard x1 > x0, y1 > y0, c.x > a.x, c.y > a.y else { return [] }
            func at(_ x: Float, _ y: Float) -> GeometryVertex {
                GeometryVertex(x: x, y: y, color: a.color,
                               u: a.u + (c.u - a.u) * (x - a.x) / (c.x - a.x),
                               v: a.v + (c.v - a.v) * (y - a.y) / (c.y - a.y))
            }
            return [at(x0, y0), at(x1, y0), at(x1, y1), at(x0, y1)]
        }
        func lerp(_ a: GeometryVertex, _ b: GeometryVertex, _ t: Float) -> GeometryVertex {
            func mix(_ x: UInt8, _ y: UInt8) -> UInt8 { UInt8((Float(x) + (Float(y) - Float(x)) * t).rounded()) }
            return GeometryVertex(
                x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t,
                color: Color(red: mix(a.color.red, b.color.red), green: mix(a.color.green, b.color.green),
                             blue: mix(a.color.blue, b.color.blue), alpha: mix(a.color.alpha, b.color.alpha)),
                u: a.u + (b.u - a.u) * t, v: a.v + (b.v - a.v) * t)
        }
        func clipEdge(_ input: [GeometryVertex], inside: (GeometryVertex) -> Float) -> [GeometryVertex] {
            // `inside` is a signed distance: >= 0 keeps the vertex.
            guard !input.isEmpty else { return [] }
            var output: [GeometryVertex] = []
            var previous = input[input.count - 1]
            var previousDistance = inside(previous)
            for current in input {
                let distance = inside(current)
                if distance >= 0 {
                    if previousDistance < 0 {
                        output.append(lerp(previous, current, previousDistance / (previousDistance - distance)))
                    }
                    output.append(current)
                } else if previousDistance >= 0 {
                    output.append(lerp(previous, current, previousDistance / (previousDistance - distance)))
                }
                previous = current
                previousDistance = distance
            }
            return output
        }
        let minX = Float(rect.minX), maxX = Float(rect.maxX), minY = Float(rect.minY), maxY = Float(rect.maxY)
        var result = clipEdge(polygon) { $0.x - minX }
        result = clipEdge(result) { maxX - $0.x }
        result = clipEdge(result) { $0.y - minY }
        result = clipEdge(result) { maxY - $0.y }
        return result
    }

    /// Appends a convex polygon to a mesh as a triangle fan.
    static func appendFan(_ polygon: [GeometryVertex], to mesh: inout Mesh) {
        guard polygon.count >= 3 else { return }
        let base = Int32(mesh.vertices.count)
        mesh.vertices.append(contentsOf: polygon)
        for i in 1..<(polygon.count - 1) {
            mesh.indices.append(contentsOf: [base, base + Int32(i), base + Int32(i + 1)])
        }
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
