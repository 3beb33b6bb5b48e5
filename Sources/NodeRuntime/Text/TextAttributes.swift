public import Compositor

// The attributed-text model: plain `Sendable` values that can be built on any thread, hashed (they
// are part of the text layout cache's key) and handed to background measuring and drawing.

/// A font: a family registered with the `FontRegistry`, a size in points and a weight.
/// - Thread: any
public struct TextFont: Hashable, Sendable, CustomStringConvertible {
    /// The family's registered name, e.g. `TextFont.sansFamily`. An unknown family falls back to the
    /// registry's default family.
    public var family: String
    /// The size in points. Fallback: NaN, infinite, negative and other sizes below
    /// `TextFont.minimumSize` are measured as the minimum, sizes above `TextFont.maximumSize` as the
    /// maximum; a `TextNode` showing such a size reports it once (`Node.diagnostics`, `TesseraLog.layout`).
    public var size: Double
    /// Bold: the family's bold face when it has one, else an emboldened regular face.
    public var isBold: Bool

    public init(family: String = TextFont.sansFamily, size: Double = 15, isBold: Bool = false) {
        self.family = family; self.size = size; self.isBold = isBold
    }

    /// The proportional family every registry knows (DejaVu Sans).
    public static let sansFamily = "DejaVu Sans"
    /// The monospaced family every registry knows (DejaVu Sans Mono), used by code blocks.
    public static let monospacedFamily = "DejaVu Sans Mono"

    /// The proportional font at `size`.
    public static func system(size: Double, bold: Bool = false) -> TextFont {
        TextFont(family: sansFamily, size: size, isBold: bold)
    }
    /// The monospaced font at `size`.
    public static func monospaced(size: Double, bold: Bool = false) -> TextFont {
        TextFont(family: monospacedFamily, size: size, isBold: bold)
    }

    /// The smallest size measured (smaller, NaN and negative sizes are raised to it).
    public static let minimumSize = 1.0
    /// The largest size measured.
    public static let maximumSize = 500.0

    /// `size` made safe for measuring.
    var sanitizedSize: Double {
        guard size.isFinite, size >= TextFont.minimumSize else { return TextFont.minimumSize }
        return min(size, TextFont.maximumSize)
    }

    public var description: String { "\(family) \(size)pt\(isBold ? " bold" : "")" }
}

/// A box reserved inside the text, for a custom emoji or an icon that another node draws. The text
/// leaves `size` free on the baseline (its bottom on the baseline, moved by `baselineOffset`) and
/// reports where the box ended up, so an image node can be placed there.
/// - Thread: any
public struct TextAttachment: Hashable, Sendable {
    /// Names the item in `TextLayout.attachmentRects` and in hit testing.
    public var identifier: String
    /// The box in points. Non-finite or negative sides count as 0.
    public var size: Size
    /// Moves the box down (negative) or up (positive) from sitting on the baseline, in points.
    public var baselineOffset: Double
    /// A picture (a custom emoji, a sticker, a mention chip) drawn in the box, aspect-fitted, in the
    /// same bitmap as the text; nil leaves the box empty for the app to place something over it.
    public var image: Bitmap?

    public init(identifier: String, size: Size, baselineOffset: Double = 0, image: Bitmap? = nil) {
        self.identifier = identifier; self.size = size; self.baselineOffset = baselineOffset; self.image = image
    }

    public static func == (a: TextAttachment, b: TextAttachment) -> Bool {
        a.identifier == b.identifier && a.size == b.size && a.baselineOffset == b.baselineOffset
            && a.image?.identity == b.image?.identity
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(identifier)
        hasher.combine(size)
        hasher.combine(baselineOffset)
        hasher.combine(image?.identity)
    }

    var sanitizedSize: Size {
        func clean(_ v: Double) -> Double { v.isFinite ? min(max(0, v), 10_000) : 0 }
        return Size(width: clean(size.width), height: clean(size.height))
    }
    var sanitizedBaselineOffset: Double { baselineOffset.isFinite ? min(max(-10_000, baselineOffset), 10_000) : 0 }
}

/// A paragraph set apart from the text around it: a quotation or a piece of code, drawn with a bar on
/// its leading side, a tinted background, an optional title, and optionally collapsed to a few lines.
///
/// Consecutive runs whose `block` values are equal form one block; a block always starts and ends a
/// paragraph. Give two adjacent blocks different titles or identifiers to keep them apart.
/// - Thread: any
public struct TextBlock: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// A quotation in the runs' own fonts.
        case quote
        /// Code: the runs are set in the monospaced family at their own size.
        case code
    }
    public var kind: Kind
    /// A line over the block's text (an author, a language), in the tint colour, bold.
    public var title: String?
    /// The bar's colour; the background is the same colour, faint.
    public var tint: Color
    /// When true only the first `collapsedLineLimit` lines show, the last ending in "…".
    public var isCollapsed: Bool
    /// The lines a collapsed block shows (at least 1).
    public var collapsedLineLimit: Int
    /// Separates blocks that would otherwise be equal and therefore merge.
    public var identifier: Int

    public init(_ kind: Kind, title: String? = nil, tint: Color? = nil, isCollapsed: Bool = false,
                collapsedLineLimit: Int = 3, identifier: Int = 0) {
        self.kind = kind
        self.title = title
        self.tint = tint ?? (kind == .quote ? Color(rgb: 0x3D8AF7) : Color(rgb: 0x7A8699))
        self.isCollapsed = isCollapsed
        self.collapsedLineLimit = collapsedLineLimit
        self.identifier = identifier
    }
}

/// How a run of text looks and what it means.
/// - Thread: any
public struct TextAttributes: Hashable, Sendable {
    public var font: TextFont
    public var color: Color
    public var isUnderlined: Bool
    public var isStruckThrough: Bool
    /// Filled behind the run's glyphs, line high.
    public var backgroundColor: Color?
    /// A value returned by hit testing when the run is tapped (a URL, a mention).
    public var link: String?
    /// Hidden under a veil until its spoiler is revealed. Consecutive spoiler runs form one spoiler.
    public var isSpoiler: Bool
    /// When set, the run's characters are replaced by one box of the attachment's size.
    public var attachment: TextAttachment?
    /// The quote or code block this run belongs to, if any.
    public var block: TextBlock?
    /// The run's colour by name in the runtime's theme: when set, a `TextNode` draws the run in the
    /// colour the theme gives it in the current appearance (in place of `color`) and draws again when
    /// that changes (dark mode, high contrast). Nil: `color`, fixed.
    public var themeColor: ThemeColor?

    public init(font: TextFont = TextFont(), color: Color = .black, isUnderlined: Bool = false,
                isStruckThrough: Bool = false, backgroundColor: Color? = nil, link: String? = nil,
                isSpoiler: Bool = false, attachment: TextAttachment? = nil, block: TextBlock? = nil,
                themeColor: ThemeColor? = nil) {
        self.font = font; self.color = color; self.isUnderlined = isUnderlined
        self.isStruckThrough = isStruckThrough; self.backgroundColor = backgroundColor; self.link = link
        self.isSpoiler = isSpoiler; self.attachment = attachment; self.block = block
        self.themeColor = themeColor
    }

    /// Attributes in `font` whose colour is the theme's `themeColor` (resolved now for `color`).
    /// - Thread: any
    public static func themed(font: TextFont = TextFont(), _ themeColor: ThemeColor) -> TextAttributes {
        TextAttributes(font: font, color: Runtime.shared.resolveColor(themeColor), themeColor: themeColor)
    }

    /// The font actually used: code blocks switch the family to the monospaced one.
    var effectiveFont: TextFont {
        guard block?.kind == .code else { return font }
        return TextFont(family: TextFont.monospacedFamily, size: font.size, isBold: font.isBold)
    }
}

/// A piece of text with one set of attributes.
/// - Thread: any
public struct TextRun: Hashable, Sendable {
    public var text: String
    public var attributes: TextAttributes
    public init(_ text: String, attributes: TextAttributes) {
        self.text = AttributedText.sanitized(text)
        self.attributes = attributes
    }

    /// `text` as it is: the caller sanitized it (`AttributedText.sanitized`).
    init(sanitized text: String, attributes: TextAttributes) {
        self.text = text
        self.attributes = attributes
    }
}

/// Text made of runs with attributes: what a `TextNode` shows and what `TextLayout` measures.
///
/// Paragraphs are separated by newlines (any of `\n`, `\r\n`, `\r`, U+2028, U+2029). NUL characters,
/// which C text functions would treat as the end of the string, are replaced by U+FFFD, as are
/// invalid UTF-8 sequences given to `init(utf8:attributes:)`; a tab becomes four spaces.
/// - Thread: any
public struct AttributedText: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The runs, in logical (reading) order. Empty runs are never kept.
    public private(set) var runs: [TextRun]

    public init() { runs = [] }

    /// `text` with one set of attributes.
    public init(_ text: String, attributes: TextAttributes = TextAttributes()) {
        runs = []
        append(text, attributes: attributes)
    }

    /// Decodes UTF-8 bytes; each invalid sequence becomes one U+FFFD (nothing is dropped).
    public init(utf8 bytes: [UInt8], attributes: TextAttributes = TextAttributes()) {
        self.init(String(decoding: bytes, as: UTF8.self), attributes: attributes)
    }

    /// `text` in one run as it is: the caller sanitized it, which spares a long text's scan.
    init(sanitized text: String, attributes: TextAttributes) {
        runs = text.isEmpty && attributes.attachment == nil ? [] : [TextRun(sanitized: text, attributes: attributes)]
    }

    public init(runs: [TextRun]) {
        self.runs = runs.filter { !$0.text.isEmpty || $0.attributes.attachment != nil }
    }

    public init(stringLiteral value: String) { self.init(value) }

    /// Appends `text` with `attributes`, merging with the last run when the attributes are equal.
    public mutating func append(_ text: String, attributes: TextAttributes) {
        let clean = AttributedText.sanitized(text)
        guard !clean.isEmpty || attributes.attachment != nil else { return }
        if attributes.attachment == nil, let last = runs.last, last.attributes == attributes {
            runs[runs.count - 1].text += clean
        } else {
            runs.append(TextRun(clean, attributes: attributes))
        }
    }

    /// Appends a box for `attachment`, in `attributes` (whose font sets the line's height around it).
    public mutating func append(_ attachment: TextAttachment, attributes: TextAttributes = TextAttributes()) {
        var attributes = attributes
        attributes.attachment = attachment
        runs.append(TextRun("\u{FFFC}", attributes: attributes))
    }

    public mutating func append(_ other: AttributedText) {
        for run in other.runs {
            if run.attributes.attachment != nil { runs.append(run) } else { append(run.text, attributes: run.attributes) }
        }
    }

    /// The characters of every run, in order.
    public var string: String { runs.map(\.text).joined() }
    /// `string`, without copying when there is one run.
    var singleString: String { runs.count == 1 ? runs[0].text : string }
    /// True when there is nothing to show.
    public var isEmpty: Bool { runs.isEmpty }

    public var description: String { string }

    /// `text` with NUL replaced by U+FFFD (C text functions would stop there) and each tab by four
    /// spaces (the fonts have no tab glyph).
    static func sanitized(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0 || $0 == 9 }) else { return text }
        var scalars = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\0": scalars.append("\u{FFFD}")
            case "\t": scalars.append(contentsOf: "    ".unicodeScalars)
            default: scalars.append(scalar)
            }
        }
        return String(scalars)
    }
}

/// Where a line's contents sit between the edges.
/// - Thread: any
public enum TextAlignment: Hashable, Sendable {
    case left, center, right
    /// Left for a left-to-right paragraph, right for a right-to-left one (decided per paragraph by its
    /// first strong character).
    case natural
}

/// Where text that does not fit is cut and replaced by the truncation token.
/// - Thread: any
public enum TruncationMode: Hashable, Sendable {
    /// "The beginning of the te…"
    case end
    /// "The begin…of the text"
    case middle
    /// "…ning of the text" (the end of the whole text).
    case start
}

/// Paragraph and truncation settings that apply to a whole text.
/// - Thread: any
public struct TextLayoutOptions: Hashable, Sendable {
    public var alignment: TextAlignment
    /// Extra points between lines (not after the last). Fallback: negative, NaN and infinite values
    /// count as 0 and values over 1,000 as 1,000 (a `TextNode` reports them once).
    public var lineSpacing: Double
    /// The most lines shown (0: no limit besides `TextLayout.maximumLineCount`). Collapsed blocks'
    /// lines count toward it.
    public var maximumNumberOfLines: Int
    public var truncationMode: TruncationMode
    /// Replaces the cut text. Nil: "…" in the attributes of the text beside the cut.
    public var truncationToken: AttributedText?
    /// Keep, while measuring, where each grapheme boundary of every line lies, so that
    /// `TextLayout.caretRect(forOffset:)`, `offset(closestTo:)` and `selectionRects(for:)` answer from
    /// stored positions without shaping (an editable field's text does). Off by default: a layout
    /// without them shapes the pieces of line those calls look at, on the calling thread.
    public var recordsCaretPositions = false

    public init(alignment: TextAlignment = .natural, lineSpacing: Double = 0, maximumNumberOfLines: Int = 0,
                truncationMode: TruncationMode = .end, truncationToken: AttributedText? = nil) {
        self.alignment = alignment; self.lineSpacing = lineSpacing
        self.maximumNumberOfLines = maximumNumberOfLines; self.truncationMode = truncationMode
        self.truncationToken = truncationToken
    }

    var sanitizedLineSpacing: Double { lineSpacing.isFinite ? min(max(0, lineSpacing), 1_000) : 0 }
}

extension AttributedText {
    /// The text with block `index` (the index-th run of consecutive runs with one `block` value, as
    /// `TextLayout.blocks` counts them) collapsed or expanded.
    func settingCollapsed(_ collapsed: Bool, ofBlock index: Int) -> AttributedText {
        var copy = self
        var blockIndex = -1
        var previous: TextBlock?
        for i in copy.runs.indices {
            let block = copy.runs[i].attributes.block
            if let block, block != previous { blockIndex += 1 }
            previous = block
            if block != nil, blockIndex == index { copy.runs[i].attributes.block?.isCollapsed = collapsed }
        }
        return copy
    }
}
