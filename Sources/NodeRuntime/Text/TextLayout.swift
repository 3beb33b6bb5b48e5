public import Compositor

/// A piece of a line drawn in one call: text of one run, one direction and one script (or one
/// attachment box), at its place in visual order.
/// - Thread: any (immutable)
struct TextFragment: Sendable {
    /// The text in logical order, as it is shaped.
    var text: String
    var run: Int
    /// Offset from the line's left edge, in points.
    var x: Double
    var width: Double
    var isRightToLeft: Bool
    var script: TextScript
    var isAttachment: Bool
    /// The fallback face that draws it, when the run's own font lacks its characters (nil: the run's).
    var face: ResolvedFace? = nil
    /// Where `text` lies in its run's string; for a truncation token's run, in the token's.
    var source: Range<String.Index>? = nil
    /// The positions (UTF-16 offsets into the whole text) the fragment shows; nil for a truncation
    /// token's text.
    var textRange: Range<Int>? = nil
    /// Where each grapheme boundary of the fragment lies, as shaped, when the layout keeps them
    /// (`TextLayoutOptions.recordsCaretPositions`); nil for an attachment.
    var caretStops: [CaretStop]? = nil
}

/// A grapheme boundary inside a fragment: its UTF-16 offset from the fragment's first position, and
/// how far from the fragment's logical start it lies (from its left edge in left-to-right text, from
/// its right edge in right-to-left text), in points. A fragment's stops begin at (0, 0) and end at
/// (its length, its width), in increasing order of both.
/// - Thread: any (a value)
struct CaretStop: Sendable, Hashable {
    var offset: Int32
    var advance: Float
}

/// A place in a text's string: a run and an index into that run's text.
/// - Thread: any
struct TextSourceIndex: Sendable, Hashable {
    var run: Int
    var index: String.Index
}

/// Turns places in a text's run strings into UTF-16 offsets of the whole text, walking from the last
/// place turned (a layout's places come in order, a line at a time, so each walk is short).
/// - Thread: the owner's
struct TextOffsets {
    let text: AttributedText
    let runStarts: [Int]
    private var last: (run: Int, index: String.Index, offset: Int)?

    init(text: AttributedText) {
        self.text = text
        runStarts = TextLayout.runStarts(of: text)
    }

    /// The offset of `place`; nil for a place in a run the text does not have (a truncation token's).
    mutating func offset(of place: TextSourceIndex) -> Int? {
        guard place.run < text.runs.count else { return nil }
        let string = text.runs[place.run].text
        let offset: Int
        if let last, last.run == place.run {
            offset = last.offset + string.utf16.distance(from: last.index, to: place.index)
        } else {
            offset = runStarts[place.run] + string.utf16.distance(from: string.startIndex, to: place.index)
        }
        last = (place.run, place.index, offset)
        return offset
    }
}

/// One measured line. Its horizontal place depends on the width of the box the text is shown in
/// (alignment), so rects come from `TextLayout`'s methods, which take that width.
/// - Thread: any (immutable)
public struct TextLine: Sendable {
    /// Top edge, in points from the top of the text.
    public let top: Double
    public let height: Double
    /// The baseline, in points from the top of the text.
    public let baseline: Double
    /// The width of the line's contents (trailing spaces excluded), in points.
    public let width: Double
    /// The direction of the line's paragraph.
    public let isRightToLeft: Bool
    /// True for the line that ends in the truncation token.
    public let isTruncated: Bool
    /// Index into `TextLayout.blocks` of the block the line is in.
    public let blockIndex: Int?
    /// 0 left, 0.5 centre, 1 right (natural alignment already resolved).
    let alignment: Double
    /// Room kept free on each side (a block's bar and padding), in points.
    let insetLeft: Double
    let insetRight: Double
    let fragments: [TextFragment]
    /// The line's ascent, for placing glyph surfaces.
    let ascent: Double
    /// Where the line's text starts and ends in the text (spaces that end it included); an empty
    /// line's start and end are where its paragraph is. Nil for a block's title.
    let sourceStart: TextSourceIndex?
    let sourceEnd: TextSourceIndex?
    /// The same as UTF-16 offsets into the whole text; nil for a block's title.
    let textRange: Range<Int>?

    /// The x of the line's left edge in a box `boxWidth` wide.
    func originX(inWidth boxWidth: Double) -> Double {
        let available = boxWidth - insetLeft - insetRight
        return insetLeft + max(0, available - width) * alignment
    }
}

/// A quote or code block's frame: its bar, background and title span the box's full width.
/// - Thread: any (immutable)
public struct TextBlockFrame: Sendable {
    public let block: TextBlock
    public let top: Double
    public let height: Double
    /// Right-to-left blocks put the bar on the right.
    public let isRightToLeft: Bool
    /// True when the block is collapsed and lines were left out.
    public let hidesLines: Bool
    let title: TextLine?

    /// Width of the bar on the leading side, and the padding inside the block, in points.
    static let barWidth = 3.0
    static let padding = EdgeInsets(top: 4, left: 10, bottom: 4, right: 8)
    /// Space between a block and the text around it.
    static let margin = 4.0

    /// The block's rectangle in a box `boxWidth` wide.
    public func rect(inWidth boxWidth: Double) -> Rect {
        Rect(x: 0, y: top, width: max(0, boxWidth), height: height)
    }
}

/// What a point in the text is over.
/// - Thread: any
public struct TextHit: Hashable, Sendable {
    public enum Target: Hashable, Sendable {
        /// A link run's value.
        case link(String)
        /// A spoiler, by its index in the text (0 for the first spoiler).
        case spoiler(Int)
        /// An attachment, by identifier.
        case attachment(String)
        /// A quote or code block that collapses or expands when tapped, by its index in `blocks`.
        case block(Int)
    }
    public var target: Target
    /// Every rect the item covers (a link broken over two lines has two), in the text's coordinates.
    public var rects: [Rect]
}

/// An attachment's box after layout.
/// - Thread: any
public struct TextAttachmentPlacement: Hashable, Sendable {
    public var identifier: String
    public var rect: Rect
}

/// Measured text: lines, their fragments in visual order, blocks, and whether anything was cut.
///
/// Made by `TextLayout.measure` on any thread and cached; immutable, so one layout is shared by the
/// node that measured it and the worker that draws it. Geometry is in points, every value a whole
/// number of pixels at `scale`. Horizontal positions depend on the width of the box the text is shown in
/// (alignment), so the methods take it; it defaults to `size.width`.
/// - Thread: any
public final class TextLayout: Sendable {
    /// The width the text was measured for (after sanitizing: 0 for NaN or negative widths).
    public let constrainedWidth: Double
    public let options: TextLayoutOptions
    /// Pixels per point the text was measured at; drawing at another scale measures again.
    public let scale: Double
    /// The size the text needs: the widest line (at most `constrainedWidth`) by the bottom of the last.
    public let size: Size
    public let lines: [TextLine]
    public let blocks: [TextBlockFrame]
    /// True when text was left out: by `maximumNumberOfLines`, a collapsed block, the layout's hard
    /// limits, or a width of zero.
    public let isTruncated: Bool
    /// What measuring could not do as asked: text cut at the layout's hard limits (more than
    /// `maximumLineCount` lines, or taller than `Bitmap.maximumSide` pixels), as a `.lineLimit`
    /// diagnostic. Each is printed through `TesseraLog.layout` once per process; a `TextNode` that
    /// shows such a layout keeps it in its `diagnostics`.
    public let diagnostics: [LayoutDiagnostic]
    /// The styles of the runs, then of any truncation-token runs.
    let runs: [TextAttributes]
    /// The text measured, for caret positions and selection (shares the caller's storage).
    let text: AttributedText
    /// The fonts it was measured with.
    let fonts: FontRegistry
    /// The spoiler and link each run belongs to (consecutive runs with the same value form one).
    let spoilerIndices: [Int?]
    let linkIndices: [Int?]
    /// How many spoilers the text has.
    public let spoilerCount: Int
    /// Each run's first UTF-16 offset in the text, then the text's length.
    let runStarts: [Int]
    /// The indices of the lines that show the text's own positions (block titles and lines of a
    /// truncation token alone left out), in the text's order: what positions are looked up in.
    let textLines: [Int]

    /// About how many bytes the layout holds (lines, fragments and their text, runs), for the layout
    /// cache's byte budget.
    let approximateByteCount: Int

    /// The most lines a layout holds; longer text is truncated as if `maximumNumberOfLines` said so: the
    /// last line ends in the truncation token (`options.truncationToken`, else "…"), and the layout
    /// reports it (`diagnostics`, printed once through `TesseraLog.layout`). The same holds for text
    /// taller than `Bitmap.maximumSide` pixels, cut at the last line that fits.
    public static let maximumLineCount = 1_000

    init(constrainedWidth: Double, options: TextLayoutOptions, scale: Double, size: Size, lines: [TextLine],
         blocks: [TextBlockFrame], isTruncated: Bool, runs: [TextAttributes], text: AttributedText, fonts: FontRegistry,
         diagnostics: [LayoutDiagnostic] = []) {
        self.diagnostics = diagnostics
        self.text = text
        self.fonts = fonts
        self.constrainedWidth = constrainedWidth
        self.options = options
        self.scale = scale
        self.size = size
        self.lines = lines
        self.blocks = blocks
        self.isTruncated = isTruncated
        self.runs = runs
        var bytes = 256 + blocks.count * 96 + runs.count * 128
        for line in lines {
            bytes += 128
            for fragment in line.fragments { bytes += 96 + fragment.text.utf8.count + 8 * (fragment.caretStops?.count ?? 0) }
        }
        approximateByteCount = bytes
        var spoilers: [Int?] = [], links: [Int?] = []
        var spoilerCount = 0, linkCount = 0
        for (index, run) in runs.enumerated() {
            let previous = index > 0 ? runs[index - 1] : nil
            if run.isSpoiler {
                if previous?.isSpoiler != true { spoilerCount += 1 }
                spoilers.append(spoilerCount - 1)
            } else {
                spoilers.append(nil)
            }
            if let link = run.link {
                if previous?.link != link { linkCount += 1 }
                links.append(linkCount - 1)
            } else {
                links.append(nil)
            }
        }
        spoilerIndices = spoilers
        linkIndices = links
        self.spoilerCount = spoilerCount
        runStarts = TextLayout.runStarts(of: text)
        textLines = lines.indices.filter { lines[$0].textRange != nil }
    }

    /// Each run's first UTF-16 offset in `text`, then the text's length.
    static func runStarts(of text: AttributedText) -> [Int] {
        var starts: [Int] = []
        starts.reserveCapacity(text.runs.count + 1)
        var total = 0
        for run in text.runs {
            starts.append(total)
            total += run.text.utf16.count
        }
        starts.append(total)
        return starts
    }

    /// The number of lines (block titles are not counted).
    public var lineCount: Int { lines.count }

    /// Each line's rectangle in a box `boxWidth` wide (default: `size.width`).
    public func lineRects(inWidth boxWidth: Double? = nil) -> [Rect] {
        let box = boxWidth ?? size.width
        return lines.map { Rect(x: $0.originX(inWidth: box), y: $0.top, width: $0.width, height: $0.height) }
    }

    /// Where each attachment's box is, in a box `boxWidth` wide (default: `size.width`).
    public func attachmentRects(inWidth boxWidth: Double? = nil) -> [TextAttachmentPlacement] {
        let box = boxWidth ?? size.width
        var result: [TextAttachmentPlacement] = []
        for line in lines {
            let origin = line.originX(inWidth: box)
            for fragment in line.fragments where fragment.isAttachment {
                guard let attachment = runs[fragment.run].attachment else { continue }
                result.append(TextAttachmentPlacement(identifier: attachment.identifier,
                                                      rect: attachmentRect(fragment, attachment, line: line, originX: origin)))
            }
        }
        return result
    }

    func attachmentRect(_ fragment: TextFragment, _ attachment: TextAttachment, line: TextLine, originX: Double) -> Rect {
        let size = attachment.sanitizedSize
        let bottom = line.baseline - attachment.sanitizedBaselineOffset
        return Rect(x: originX + fragment.x, y: bottom - size.height, width: fragment.width, height: size.height)
    }

    /// What is under `point` (in the text's coordinates, in a box `boxWidth` wide): a spoiler still
    /// veiled first, then a link, then an attachment, then a block that collapses or expands (a
    /// collapsed one, or one of `expandedBlocks`). Nil over plain text or outside the text.
    public func hitTest(_ point: Point, inWidth boxWidth: Double? = nil, revealedSpoilers: Set<Int> = [],
                        expandedBlocks: Set<Int> = []) -> TextHit? {
        guard point.x.isFinite, point.y.isFinite else { return nil }
        let box = boxWidth ?? size.width
        if let hit = itemHit(point, box: box, revealedSpoilers: revealedSpoilers) { return hit }
        guard point.x >= 0, point.x < box else { return nil }
        for (index, frame) in blocks.enumerated()
        where point.y >= frame.top && point.y < frame.top + frame.height && (frame.block.isCollapsed || expandedBlocks.contains(index)) {
            return TextHit(target: .block(index), rects: [Rect(x: 0, y: frame.top, width: box, height: frame.height)])
        }
        return nil
    }

    private func itemHit(_ point: Point, box: Double, revealedSpoilers: Set<Int>) -> TextHit? {
        for line in lines where point.y >= line.top && point.y < line.top + line.height {
            let origin = line.originX(inWidth: box)
            for fragment in line.fragments where point.x >= origin + fragment.x && point.x < origin + fragment.x + fragment.width {
                let run = fragment.run
                if let spoiler = spoilerIndices[run], !revealedSpoilers.contains(spoiler) {
                    return TextHit(target: .spoiler(spoiler), rects: rects(inWidth: box) { self.spoilerIndices[$0] == spoiler })
                }
                if let link = runs[run].link, let index = linkIndices[run] {
                    return TextHit(target: .link(link), rects: rects(inWidth: box) { self.linkIndices[$0] == index })
                }
                if let attachment = runs[run].attachment {
                    return TextHit(target: .attachment(attachment.identifier),
                                   rects: [attachmentRect(fragment, attachment, line: line, originX: origin)])
                }
                return nil
            }
        }
        return nil
    }

    /// The rects of a spoiler (for a reveal animation or a test), in a box `boxWidth` wide.
    public func rects(forSpoiler index: Int, inWidth boxWidth: Double? = nil) -> [Rect] {
        rects(inWidth: boxWidth ?? size.width) { self.spoilerIndices[$0] == index }
    }

    /// The rects of every run with link value `link`, in a box `boxWidth` wide.
    public func rects(forLink link: String, inWidth boxWidth: Double? = nil) -> [Rect] {
        rects(inWidth: boxWidth ?? size.width) { self.runs[$0].link == link }
    }

    /// One rect per line for the fragments whose run passes `include`, merged along the line.
    private func rects(inWidth box: Double, where include: (Int) -> Bool) -> [Rect] {
        var result: [Rect] = []
        for line in lines {
            let origin = line.originX(inWidth: box)
            var minX = Double.infinity, maxX = -Double.infinity
            for fragment in line.fragments where include(fragment.run) {
                minX = min(minX, origin + fragment.x)
                maxX = max(maxX, origin + fragment.x + fragment.width)
            }
            if minX < maxX { result.append(Rect(x: minX, y: line.top, width: maxX - minX, height: line.height)) }
        }
        return result
    }
}
