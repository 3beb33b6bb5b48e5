import Tessera
import Foundation

/// A captioned sample of one TextNode feature.
final class TextSampleNode: Node, NodeDrawing, @unchecked Sendable {
    let caption: TextNode
    let sample: TextNode

    let captionText: String

    init(caption: String, sample: TextNode) {
        captionText = caption.uppercased()
        self.caption = TextNode(captionText, attributes: Palette.text(11, bold: true, color: Palette.secondary))
        self.sample = sample
        super.init()
        // Every sample's text can be selected with the pointer or the keyboard and copied.
        sample.isSelectable = true
        isTransactionContainer = true
        addSubnode(self.caption)
        addSubnode(sample)
    }

    /// A tapped link shows where it leads in the caption, and the gallery reports it (a test driving
    /// a real window reads that line); with a window it opens in the desktop's browser (OpenURI).
    override func didLoad() {
        super.didLoad()
        sample.linkTapHandler = { [weak self] link in
            GalleryApp.report("gallery: link opened \(link)")
            if let app = Application.current, app.opensLinks { app.openLinkByDefault(link) }
            guard let self else { return }
            self.caption.attributedText = AttributedText("\(self.captionText) — opened \(link)",
                                                         attributes: Palette.text(11, bold: true, color: Palette.accent))
        }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 6) {
            caption
            sample.flexShrink(1)
        }
        .inset(EdgeInsets(top: 12, left: 16, bottom: 12, right: 16))
    }

    /// The sample's background and separator line, in the current appearance.
    struct DrawParameters: Sendable {
        var background: Color
        var separator: Color
    }

    func drawParameters() -> DrawParameters {
        DrawParameters(background: themeColor(Palette.background), separator: themeColor(Palette.separator))
    }

    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        context.fill(info.bounds, color: parameters.background)
        context.fill(Rect(x: 16, y: info.bounds.height - 0.5, width: info.bounds.width - 32, height: 0.5),
                     color: parameters.separator)
    }
}

/// Every TextNode feature, one per row: alignments, truncation, decorations, links, spoilers,
/// right-to-left text, quotes and code.
@MainActor
final class TextShowcaseController: ListScreenController, ListDataSource {
    private let samples: [@Sendable () -> Node]
    /// The row of the spoiler sample.
    private(set) var spoilerRow: Int?
    /// The row of the collapsed quote sample.
    private(set) var collapsedQuoteRow: Int?

    init(data: ChatData) {
        let lorem = "Nodes are measured on any thread, drawn on background workers, and placed on the screen by the main thread only when they are complete."
        let arabic = data.chats.first { $0.locale.hasPrefix("ar") }?.messages.first?.text ?? "مرحبا بالعالم"
        let hebrew = data.chats.first { $0.locale.hasPrefix("he") }?.messages.first?.text ?? "שלום עולם"
        func sample(_ caption: String, _ make: @escaping @Sendable () -> TextNode) -> @Sendable () -> Node {
            { TextSampleNode(caption: caption, sample: make()) }
        }
        let body = Palette.text(15)
        var items: [@Sendable () -> Node] = []
        for (name, alignment) in [("left", TextAlignment.left), ("center", .center), ("right", .right), ("natural", .natural)] {
            items.append(sample("Alignment: \(name)") {
                let node = TextNode(lorem, attributes: body)
                node.alignment = alignment
                return node
            })
        }
        for (name, mode) in [("end", TruncationMode.end), ("middle", .middle), ("start", .start)] {
            items.append(sample("Truncation at the \(name), two lines") {
                let node = TextNode(lorem + " " + lorem, attributes: body)
                node.maximumNumberOfLines = 2
                node.truncationMode = mode
                return node
            })
        }
        items.append(sample("Custom truncation token") {
            let node = TextNode(lorem + " " + lorem, attributes: body)
            node.maximumNumberOfLines = 1
            node.truncationToken = AttributedText(" … more", attributes: Palette.text(15, color: Palette.accent))
            return node
        })
        items.append(sample("Decorations") {
            var text = AttributedText("Struck through", attributes: { var struck = body; struck.isStruckThrough = true; return struck }())
            text.append(", ", attributes: body)
            text.append("underlined", attributes: { var underlined = body; underlined.isUnderlined = true; return underlined }())
            text.append(", ", attributes: body)
            text.append("highlighted", attributes: { var marked = body; marked.backgroundColor = Palette.color(Palette.highlight); return marked }())
            text.append(" and ", attributes: body)
            text.append("bold", attributes: Palette.text(15, bold: true))
            text.append(" runs in one paragraph.", attributes: body)
            return TextNode(attributedText: text)
        })
        items.append(sample("Links: click one") {
            var text = AttributedText("Read the ", attributes: body)
            var link = Palette.text(15, color: Palette.accent)
            link.isUnderlined = true
            link.link = "https://example.com/tessera/docs/nodes"
            text.append("node guide", attributes: link)
            text.append(" or the ", attributes: body)
            link.link = "tessera://docs/layout"
            text.append("layout notes", attributes: link)
            text.append(".", attributes: body)
            return TextNode(attributedText: text)
        })
        let spoilerIndex = items.count
        items.append(sample("Spoilers: click to reveal") {
            var text = AttributedText("The answer is ", attributes: body)
            var spoiler = body
            spoiler.isSpoiler = true
            text.append("forty-two", attributes: spoiler)
            text.append(", and the butler did ", attributes: body)
            text.append("not do it", attributes: spoiler)
            text.append(".", attributes: body)
            return TextNode(attributedText: text)
        })
        items.append(sample("Arabic, right to left") { TextNode(arabic, attributes: body) })
        items.append(sample("Hebrew, right to left") { TextNode(hebrew, attributes: body) })
        items.append(sample("Mixed directions in one line") {
            TextNode("Tessera draws שלום and مرحبا beside English words.", attributes: body)
        })
        items.append(sample("Block quote with a title") {
            var quote = body
            quote.block = TextBlock(.quote, title: "Texture guide")
            return TextNode(attributedText: AttributedText("Creating a node doesn't create its underlying layer, so nodes are cheap to make on any thread.", attributes: quote))
        })
        items.append(sample("Code block") {
            var code = TextAttributes.themed(font: .monospaced(size: 13), Palette.title)
            code.block = TextBlock(.code)
            return TextNode(attributedText: AttributedText("static func draw(_ p: Parameters,\n                 in context: inout BitmapContext,\n                 info: DrawInfo)", attributes: code))
        })
        let collapsedQuoteIndex = items.count
        items.append(sample("Collapsed quote: click it to expand or collapse") {
            var quote = body
            quote.block = TextBlock(.quote, title: "Release notes", isCollapsed: true, collapsedLineLimit: 2)
            return TextNode(attributedText: AttributedText(
                "Text now breaks lines where Unicode allows, orders mixed directions by the bidirectional algorithm, " +
                "finds fonts for every script through fontconfig and draws colour emoji at the text size. " +
                "Quotes and code blocks can start collapsed; a click shows the rest, measured again in the background.",
                attributes: quote))
        })
        items.append(sample("Collapsed code block") {
            var code = TextAttributes.themed(font: .monospaced(size: 13), Palette.title)
            code.block = TextBlock(.code, isCollapsed: true, collapsedLineLimit: 2)
            return TextNode(attributedText: AttributedText(
                "let node = TextNode(\"Hello\")\nnode.maximumNumberOfLines = 2\nnode.truncationMode = .middle\nlist.reloadData()",
                attributes: code))
        })
        items.append(sample("Emoji: sequences, skin tones, flags, keycaps") {
            TextNode("Party 🎉 with the 👩‍👩‍👧 family, 👍🏽 and 👋🏿, flags 🇯🇵 🇫🇷 and keycaps 1️⃣ 2️⃣ — in colour at the text size.",
                     attributes: body)
        })
        items.append(sample("Chinese and Japanese, through font fallback") {
            TextNode("我们六点半在车站见面，请带上照片。明日の午後に駅で会いましょう。", attributes: body)
        })
        items.append(sample("Hindi and Thai, shaped by HarfBuzz") {
            TextNode("नमस्ते, कल सुबह स्टेशन पर मिलते हैं। สวัสดีครับ พบกันที่สถานีพรุ่งนี้เช้า", attributes: body)
        })
        items.append(sample("Right to left with numbers and a URL") {
            TextNode("הפגישה ב-10:30 בחדר 4, פרטים ב-https://example.com/meet?id=42 (תודה!)", attributes: body)
        })
        items.append(sample("A long URL breaks after its slashes") {
            TextNode("https://example.com/messages/2026/november/a-very-long-path-component/photo-of-the-day.jpg",
                     attributes: body)
        })
        samples = items
        let list = ListNode()
        super.init(list: list, node: list, debugName: "text", backgroundColor: Palette.groupedBackground, estimatedRowHeight: 90)
        spoilerRow = spoilerIndex
        collapsedQuoteRow = collapsedQuoteIndex
        list.dataSource = self
    }

    func numberOfRows(in list: ListNode) -> Int { samples.count }

    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock { samples[row] }
}
