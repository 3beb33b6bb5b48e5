internal import CSDL
public import Compositor

/// Draws measured text into a bitmap context: block backgrounds and bars, run backgrounds, glyphs
/// (rendered by SDL_ttf with the drawing thread's own fonts), underlines and strikethroughs, and the
/// veils over spoilers that are not revealed.
/// - Thread: any; it uses the calling thread's fonts (a display worker's, when a node draws).
public enum TextRenderer {
    /// Draws `layout` with its top-left corner at `origin`, aligned in a box `boxWidth` points wide
    /// (default: the layout's width). The context's scale should be the layout's; at another scale the
    /// glyphs are drawn at the layout's and resampled.
    public static func draw(_ layout: TextLayout, in context: inout BitmapContext, at origin: Point = .zero,
                            boxWidth: Double? = nil, revealedSpoilers: Set<Int> = [], fonts: FontRegistry = .shared,
                            isCancelled: () -> Bool = { false }) {
        let box = boxWidth.flatMap { $0.isFinite ? $0 : nil } ?? layout.size.width
        guard origin.x.isFinite, origin.y.isFinite else { return }
        let scale = layout.scale
        func snap(_ value: Double) -> Double { PixelGeometry.aligned(value, scale: scale) }
        let measurer = TextMeasurer(runs: layout.runs, registry: fonts, scale: scale)
        let visible = context.bounds

        for block in layout.blocks {
            drawBlock(block, layout: layout, in: &context, origin: origin, box: box, measurer: measurer, snap: snap)
        }
        for line in layout.lines {
            if isCancelled() { return }
            // Lines outside the context cost nothing.
            guard origin.y + line.top + line.height > visible.minY, origin.y + line.top < visible.maxY else { continue }
            drawLine(line, layout: layout, in: &context, origin: origin, box: box, revealedSpoilers: revealedSpoilers,
                     measurer: measurer, snap: snap)
        }
    }

    private static func drawBlock(_ block: TextBlockFrame, layout: TextLayout, in context: inout BitmapContext,
                                  origin: Point, box: Double, measurer: TextMeasurer, snap: (Double) -> Double) {
        let rect = block.rect(inWidth: box).offsetBy(dx: origin.x, dy: origin.y)
        let radii = CornerRadii(min(5, rect.height / 2))
        let tint = block.block.tint
        context.fillRoundedRect(rect, radii: radii, color: tint.withAlphaMultiplied(by: block.block.kind == .code ? 0.14 : 0.1))
        context.saveClip()
        context.clip(toRoundedRect: rect, radii: radii)
        let barX = block.isRightToLeft ? rect.maxX - TextBlockFrame.barWidth : rect.minX
        context.fill(Rect(x: barX, y: rect.minY, width: TextBlockFrame.barWidth, height: rect.height), color: tint)
        context.restoreClip()
        if let title = block.title {
            drawLine(title, layout: layout, in: &context, origin: origin, box: box, revealedSpoilers: [],
                     measurer: measurer, snap: snap)
        }
    }

    private static func drawLine(_ line: TextLine, layout: TextLayout, in context: inout BitmapContext, origin: Point,
                                 box: Double, revealedSpoilers: Set<Int>, measurer: TextMeasurer,
                                 snap: (Double) -> Double) {
        let lineX = origin.x + line.originX(inWidth: box)
        let top = snap(origin.y + line.top)
        let baseline = snap(origin.y + line.baseline)
        let scale = layout.scale

        // Backgrounds first, so a neighbour's glyphs are never covered.
        for fragment in line.fragments {
            guard let background = layout.runs[fragment.run].backgroundColor else { continue }
            let x = snap(lineX + fragment.x)
            context.fill(Rect(x: x, y: top, width: snap(lineX + fragment.x + fragment.width) - x, height: snap(line.height)),
                         color: background)
        }
        for fragment in line.fragments {
            let attributes = layout.runs[fragment.run]
            let x = snap(lineX + fragment.x)
            let width = snap(lineX + fragment.x + fragment.width) - x
            if let spoiler = layout.spoilerIndices[fragment.run], !revealedSpoilers.contains(spoiler) {
                drawVeil(Rect(x: x, y: top, width: width, height: snap(line.height)), color: attributes.color,
                         seed: spoiler, in: &context, scale: scale)
                continue
            }
            if fragment.isAttachment {
                if let attachment = attributes.attachment, let image = attachment.image, !image.isEmpty {
                    var rect = layout.attachmentRect(fragment, attachment, line: line, originX: line.originX(inWidth: box))
                    rect = rect.offsetBy(dx: origin.x, dy: origin.y)
                    context.draw(image, in: ImageNode.placement(of: image, in: rect, mode: .aspectFit))
                }
                continue
            }
            guard let handle = fragment.face.map({ measurer.handle(face: $0, run: fragment.run) }) ?? measurer.handle(run: fragment.run)
            else {
                // No font opens for this text (reported once by the registry): empty boxes rather than
                // nothing, so missing text is seen where it belongs.
                drawPlaceholderBoxes(fragment.text, x: x, baseline: baseline, run: fragment.run, color: attributes.color,
                                     measurer: measurer, in: &context)
                continue
            }
            let opaque = Color(red: attributes.color.red, green: attributes.color.green, blue: attributes.color.blue)
            if handle.glyphScale != 1 {
                // Colour bitmaps (emoji): drawn in their own colours, scaled to the text's size, their
                // bottom at the descent below the baseline.
                if let glyphs = scaledColorGlyphs(fragment, handle: handle, scale: scale) {
                    let size = glyphs.pointSize
                    let descent = Double(measurer.metrics(run: fragment.run).descent) / scale
                    context.draw(glyphs, in: Rect(origin: Point(x: x, y: baseline + descent - size.height), size: size))
                }
                continue
            }
            if let surface = handle.render(fragment.text, color: opaque, rightToLeft: fragment.isRightToLeft,
                                           script: fragment.script) {
                let size = Size(width: Double(surface.pointee.w) / scale, height: Double(surface.pointee.h) / scale)
                let glyphTop = baseline - Double(handle.metrics.ascent) / scale
                if let bitmap = glyphBitmap(surface, color: attributes.color, scale: scale) {
                    context.draw(bitmap, in: Rect(origin: Point(x: x, y: glyphTop), size: size))
                }
                SDL_FreeSurface(surface)
            }
            let pixelSize = Double(handle.pixelSize)
            let thickness = max(1, (pixelSize / 15).rounded()) / scale
            if attributes.isUnderlined {
                let offset = max(1, (pixelSize * 0.09).rounded()) / scale
                context.fill(Rect(x: x, y: baseline + offset, width: width, height: thickness), color: attributes.color)
            }
            if attributes.isStruckThrough {
                let rise = (pixelSize * 0.3).rounded() / scale
                context.fill(Rect(x: x, y: baseline - rise, width: width, height: thickness), color: attributes.color)
            }
        }
    }

    /// One outlined box per character of `text` (none for white space), each advancing as
    /// `TextMeasurer.placeholderWidth` measures it, standing on the baseline.
    private static func drawPlaceholderBoxes(_ text: String, x: Double, baseline: Double, run: Int, color: Color,
                                             measurer: TextMeasurer, in context: inout BitmapContext) {
        let scale = measurer.scale
        let em = Double(measurer.pixelSize(of: measurer.runs[run].effectiveFont)) / scale
        let line = max(1, PixelGeometry.nearestWhole(scale)) / scale
        let height = PixelGeometry.aligned(em * 0.7, scale: scale)
        var left = x
        for character in text {
            let advance = Double(measurer.placeholderWidth(of: String(character)[...], run: run)) / scale
            defer { left += advance }
            guard !character.isWhitespace else { continue }
            let box = Rect(x: PixelGeometry.aligned(left + em * 0.08, scale: scale), y: baseline - height,
                           width: PixelGeometry.aligned(em * 0.44, scale: scale), height: height)
            context.fill(Rect(x: box.minX, y: box.minY, width: box.width, height: line), color: color)
            context.fill(Rect(x: box.minX, y: box.maxY - line, width: box.width, height: line), color: color)
            context.fill(Rect(x: box.minX, y: box.minY, width: line, height: box.height), color: color)
            context.fill(Rect(x: box.maxX - line, y: box.minY, width: line, height: box.height), color: color)
        }
    }

    /// `fragment`'s colour glyphs rendered at the face's bitmap size and shrunk to the text's, from the
    /// face's cache when drawn before.
    private static func scaledColorGlyphs(_ fragment: TextFragment, handle: FontHandle, scale: Double) -> Bitmap? {
        let key = "\(scale)|\(fragment.isRightToLeft)|" + fragment.text
        if let cached = handle.scaledGlyphs[key] { return cached }
        guard let surface = handle.render(fragment.text, color: Color(red: 0, green: 0, blue: 0),
                                          rightToLeft: fragment.isRightToLeft, script: fragment.script) else { return nil }
        defer { SDL_FreeSurface(surface) }
        guard let full = withStraightARGBRows(of: surface, { width, height, bytesPerRow, rows in
            try? Bitmap(width: width, height: height, format: .straightARGB8888, bytesPerRow: bytesPerRow, rows: rows)
        }) else { return nil }
        let width = max(1, PixelGeometry.nearestIndex(Double(full.width) * handle.glyphScale))
        let height = max(1, PixelGeometry.nearestIndex(Double(full.height) * handle.glyphScale))
        guard var context = try? BitmapContext(pixelWidth: width, pixelHeight: height, scale: scale) else { return nil }
        context.draw(full, in: context.bounds)
        let glyphs = context.makeBitmap()
        if handle.scaledGlyphs.count >= FontHandle.scaledGlyphLimit { handle.scaledGlyphs.removeAll(keepingCapacity: true) }
        handle.scaledGlyphs[key] = glyphs
        return glyphs
    }

    /// The glyphs of a blended SDL_ttf surface as a premultiplied bitmap in `color` (alpha included):
    /// its alpha is each pixel's coverage, so each pixel is a lookup in a 256-entry table rather than a
    /// general conversion followed by a premultiply pass.
    private static func glyphBitmap(_ surface: UnsafeMutablePointer<SDL_Surface>, color: Color, scale: Double) -> Bitmap? {
        withStraightARGBRows(of: surface) { width, height, bytesPerRow, rows in
            try? Bitmap(width: width, height: height, scale: scale, format: .coverageARGB8888(tint: color),
                        bytesPerRow: bytesPerRow, rows: rows)
        }
    }

    /// Calls `body` with `surface`'s pixels as straight ARGB8888 rows: width, height, bytes per row and
    /// the bytes, which `Bitmap`'s rows initializer checks against the size. SDL_ttf's blended surfaces
    /// are in that format already; any other surface is converted by SDL first. Nil when SDL cannot
    /// convert or lock the surface. The caller keeps the surface.
    private static func withStraightARGBRows<Result>(
        of surface: UnsafeMutablePointer<SDL_Surface>,
        _ body: (_ width: Int, _ height: Int, _ bytesPerRow: Int, _ rows: UnsafeRawBufferPointer) -> Result?
    ) -> Result? {
        let argb8888 = SDL_PIXELFORMAT_ARGB8888.rawValue
        var converted: UnsafeMutablePointer<SDL_Surface>?
        if surface.pointee.format?.pointee.format != argb8888 {
            converted = SDL_ConvertSurfaceFormat(surface, argb8888, 0)
            if converted == nil { return nil }
        }
        defer { if let converted { SDL_FreeSurface(converted) } }
        let source = converted ?? surface
        // Locking is a no-op for a surface that is not RLE-encoded, and decodes one that is.
        guard SDL_LockSurface(source) == 0 else { return nil }
        defer { SDL_UnlockSurface(source) }
        let height = Int(source.pointee.h), pitch = Int(source.pointee.pitch)
        let byteCount = pitch > 0 && height > 0 && source.pointee.pixels != nil ? pitch * height : 0
        return body(Int(source.pointee.w), height, pitch,
                    UnsafeRawBufferPointer(start: source.pointee.pixels, count: byteCount))
    }

    /// A spoiler's veil: a faint rounded plate in the text colour strewn with specks. The specks come
    /// from a hash of their cell, so the same spoiler always looks the same.
    private static func drawVeil(_ rect: Rect, color: Color, seed: Int, in context: inout BitmapContext, scale: Double) {
        let plate = rect.insetBy(dx: 0, dy: min(2, rect.height / 4))
        guard !plate.isEmpty else { return }
        context.fillRoundedRect(plate, radii: CornerRadii(min(4, plate.height / 2)), color: color.withAlphaMultiplied(by: 0.16))
        let cell = 2.5
        let speck = max(1, PixelGeometry.nearestWhole(scale)) / scale
        let columns = Int(plate.width / cell), rows = Int(plate.height / cell)
        guard columns > 0, rows > 0 else { return }
        for row in 0..<rows {
            for column in 0..<columns {
                var hash = UInt32(truncatingIfNeeded: column &* 73_856_093 ^ row &* 19_349_663 ^ seed &* 83_492_791)
                hash ^= hash >> 13
                hash = hash &* 0x5BD1_E995
                hash ^= hash >> 15
                guard hash & 3 == 0 else { continue }
                let dx = Double((hash >> 4) & 7) / 8 * cell
                let dy = Double((hash >> 8) & 7) / 8 * cell
                let alpha = 0.45 + Double((hash >> 12) & 7) / 14
                let x = PixelGeometry.aligned(plate.minX + Double(column) * cell + dx, scale: scale)
                let y = PixelGeometry.aligned(plate.minY + Double(row) * cell + dy, scale: scale)
                context.fill(Rect(x: x, y: y, width: speck, height: speck), color: color.withAlphaMultiplied(by: alpha))
            }
        }
    }
}
