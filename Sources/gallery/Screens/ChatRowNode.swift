import Tessera
import Foundation

/// One chat in the list: avatar, title with marks and time, a two-line preview, an unread badge.
/// A transaction container, so it appears whole. The app's Chats screen and the benchmarks that
/// measure a chat list (`--bench fling`, `policies`, `rows`) make their rows with it.
final class ChatRowNode: Node, NodeDrawing, @unchecked Sendable {
    static let height = 76.0

    /// The row's height at the appearance's text scale: its insets, and its text grown with the scale
    /// (`height` at 1). - Thread: any
    static var scaledHeight: Double {
        let textScale = Runtime.shared.appearance.textScale
        return textScale == 1 ? height : (20 + 56 * textScale).rounded()
    }

    let avatar: Node
    let title: TextNode
    let time: TextNode
    let preview: TextNode
    let badge: Node?
    let marks: [IconNode]
    /// What a screen reader reads for the row: "Laura del Moraleda, 2 unread, 08:20, last message …".
    let spokenLabel: String

    /// A row is one element to a screen reader (its texts are read as its label) and a Tab stop:
    /// Enter or Space opens the chat.
    override var isAccessibilityElementByDefault: Bool { true }
    override var canBecomeFocused: Bool { true }
    override func accessibilityDefaults() -> AccessibilityDescription {
        AccessibilityDescription(role: .listItem, label: spokenLabel, hint: "Opens the chat", states: [.selectable],
                                 actions: [.press], exposesChildren: false)
    }

    /// The row's words: the title, marks, unread count, time and the last message.
    static func spokenLabel(for chat: ChatData.Chat) -> String {
        var parts = [chat.title]
        if chat.pinned { parts.append("pinned") }
        if chat.muted { parts.append("muted") }
        if chat.unread > 0 { parts.append("\(chat.unread) unread") }
        if let last = chat.lastMessage {
            parts.append(Format.clockTime(last.time))
            parts.append("last message " + previewText(for: chat).string)
        }
        return parts.joined(separator: ", ")
    }

    /// How a row loads its avatar photo. The app uses the defaults; the benchmarks turn the knobs.
    /// - Thread: any (a value)
    struct Configuration: Sendable {
        /// Where each row's avatar file comes from.
        enum AvatarFiles: Sendable {
            /// The chat's own photo: rows that show the same photo share one decode through the cache.
            case shared
            /// A file of each row's own (`DistinctAvatarFiles`), so no row's avatar is a decode-cache
            /// hit: a list of distinct people, each photo read and decoded on a worker, as an app's disk
            /// cache of their photos would give them.
            case distinct(DistinctAvatarFiles)
        }

        var avatarFiles = AvatarFiles.shared
        /// Decodes the avatar inside the row's draw (`DecodingAvatarNode`) instead of through an image
        /// node: with `Runtime.forcesSynchronousDisplay`, on the UI thread when the row becomes
        /// visible, as a table-view cell setting its image would (the synchronous baseline).
        var decodesAvatarInDraw = false
        /// The decoded-image cache the avatars go through; nil for the runtime's shared one.
        var imageCache: ImageCache?
        /// The gallery's asset server (`--serve-assets`): the chat's own photo is loaded by URL from
        /// it instead of from its file (with `.shared` avatar files). nil reads the files.
        var servedAssets: ServedAssets?
    }

    /// Everything a row shows, captured on the UI thread when the list asks for the row.
    /// - Thread: any (a value)
    struct Model: Sendable {
        var chat: ChatData.Chat
        /// The avatar photo's file; nil for a chat without a photo, which shows its initials.
        var avatarPath: String?
        /// The avatar photo's URL on the asset server, when the configuration names one.
        var avatarURL: URL?
        var configuration: Configuration

        /// The row that shows dataset row `row` of `data`.
        init(data: ChatData, row: Int, configuration: Configuration = Configuration()) {
            chat = data.chat(forRow: row)
            self.configuration = configuration
            switch configuration.avatarFiles {
            case .shared: avatarPath = chat.avatar.map { data.photoPath($0) }
            case .distinct(let files): avatarPath = chat.avatar == nil ? nil : files.path(forRow: row)
            }
            if case .shared = configuration.avatarFiles, let served = configuration.servedAssets {
                avatarURL = chat.avatar.map { served.url(forAsset: $0) }
            }
        }
    }

    init(_ model: Model) {
        let chat = model.chat
        if let path = model.avatarPath {
            avatar = Self.makePhotoAvatar(path: path, url: model.avatarURL, configuration: model.configuration)
        } else {
            let circle = Node()
            circle.backgroundColor = Palette.avatarColors[chat.title.unicodeScalars.reduce(0) { ($0 &* 31 &+ Int($1.value)) & 0xFFFF } % Palette.avatarColors.count]
            circle.cornerRadius = 26
            circle.cornerRoundingMode = .compositorClip
            let initials = TextNode(chat.initials, attributes: Palette.text(19, bold: true, fixed: .white))
            circle.addSubnode(initials)
            circle.isTransactionContainer = false
            avatar = circle
        }
        title = TextNode(chat.title, attributes: Palette.text(15, bold: true))
        title.maximumNumberOfLines = 1
        time = TextNode(chat.lastMessage.map { Format.clockTime($0.time) } ?? "", attributes: Palette.text(12, color: Palette.secondary))
        preview = TextNode(attributedText: Self.previewText(for: chat))
        preview.maximumNumberOfLines = 2
        preview.truncationMode = .end
        if chat.unread > 0 {
            let capsule = Node()
            capsule.themedBackgroundColor = chat.muted ? Palette.mutedBadge : Palette.accent
            capsule.cornerRadius = 10
            capsule.cornerRoundingMode = .compositorClip
            let count = TextNode(Format.compactCount(chat.unread), attributes: Palette.text(12, bold: true, fixed: .white))
            capsule.addSubnode(count)
            badge = capsule
        } else {
            badge = nil
        }
        var marks: [IconNode] = []
        if chat.muted { marks.append(IconNode(.muted)) }
        if chat.pinned { marks.append(IconNode(.pin)) }
        self.marks = marks
        spokenLabel = Self.spokenLabel(for: chat)
        super.init()
        isTransactionContainer = true
        // One opaque bitmap per row: the worker flattens avatar, texts and badge, and the compositor
        // copies a single texture without blending.
        shouldRasterizeDescendants = true
        for node in [avatar, title, time, preview] { addSubnode(node) }
        marks.forEach { addSubnode($0) }
        if let badge { addSubnode(badge) }
    }

    /// The round photo avatar, loaded as `configuration` says: by `url` when there is one.
    private static func makePhotoAvatar(path: String, url: URL?, configuration: Configuration) -> Node {
        if configuration.decodesAvatarInDraw { return DecodingAvatarNode(path: path) }
        let image = ImageNode()
        if let cache = configuration.imageCache { image.imageCache = cache }
        if let url, let served = configuration.servedAssets {
            image.networkLoader = served.imageLoader
            image.source = .url(url)
        } else {
            image.source = .file(path)
        }
        image.imageCornerRadii = CornerRadii(26)
        image.emptyColor = Palette.color(Palette.avatarPlaceholder)
        image.contentsCrossFadeDuration = 0
        return image
    }

    /// The preview as the row shows it: in a group, who wrote the last message ("You" for the user),
    /// then its text on one line ("Photo" for a photo without text); empty for a chat with no messages.
    /// - Thread: any
    static func previewText(for chat: ChatData.Chat) -> AttributedText {
        var text = AttributedText()
        let last = chat.lastMessage
        if chat.group, let last {
            text.append((last.out ? "You" : last.author) + ": ", attributes: Palette.text(14, color: Palette.title))
        }
        let body = last.map { $0.text.isEmpty ? "Photo" : $0.text.replacingOccurrences(of: "\n", with: " ") } ?? ""
        text.append(body, attributes: Palette.text(14, color: Palette.secondary))
        return text
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        let badgeSpec: (any LayoutElement)? = badge.map { capsule in
            let count = capsule.subnodes[0]
            return count.inset(EdgeInsets(top: 2, left: 7, bottom: 2, right: 7)).background(capsule).minWidth(20)
        }
        let avatarSpec: any LayoutElement = avatar.subnodes.first.map { initials in
            avatar.size(Size(width: 52, height: 52)).overlay(initials.centered())
        } ?? avatar.size(Size(width: 52, height: 52))
        return HStack(spacing: 12, alignItems: .center) {
            avatarSpec
            VStack(spacing: 3) {
                HStack(spacing: 4, alignItems: .center) {
                    title.flexShrink(1)
                    marks
                    Spacer()
                    time
                }
                HStack(spacing: 8, alignItems: .start) {
                    preview.flexShrink(1).flexGrow(1)
                    badgeSpec
                }
            }.flexGrow(1).flexShrink(1)
        }
        .inset(EdgeInsets(top: 10, left: 12, bottom: 10, right: 12))
        .height(.points(Self.scaledHeight))
    }

    /// The row's background and separator line, in the current appearance.
    struct DrawParameters: Sendable {
        var background: Color
        var separator: Color
    }

    // The row draws its own background and separator line.
    func drawParameters() -> DrawParameters {
        DrawParameters(background: themeColor(Palette.background), separator: themeColor(Palette.separator))
    }

    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        context.fill(info.bounds, color: parameters.background)
        context.fill(Rect(x: 76, y: info.bounds.height - 0.5, width: info.bounds.width - 76, height: 0.5),
                     color: parameters.separator)
    }
}

/// A round avatar that decodes its photo inside its draw (`ChatRowNode.Configuration.decodesAvatarInDraw`).
final class DecodingAvatarNode: Node, NodeDrawing, @unchecked Sendable {
    /// What an avatar shows until its photo is decoded, or when it cannot be.
    static let emptyColor = Color(rgb: 0xE4E7EC)

    struct DrawParameters: Sendable {
        var path: String
    }

    private let parameters: DrawParameters

    init(path: String) {
        parameters = DrawParameters(path: path)
        super.init()
    }

    func drawParameters() -> DrawParameters { parameters }

    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        let bounds = info.bounds
        let target = (width: PixelGeometry.pixelCount(strictlyCovering: bounds.width, scale: info.scale),
                      height: PixelGeometry.pixelCount(strictlyCovering: bounds.height, scale: info.scale))
        guard let decoded = try? ImageDecoder.decode(.file(parameters.path)),
              let shown = try? ImageDecoder.prepareForDisplay(decoded, crop: nil, mode: .aspectFill, target: target,
                                                              scale: info.scale) else {
            context.fill(bounds, color: emptyColor)
            return
        }
        context.saveClip()
        context.clip(toRoundedRect: bounds, radii: CornerRadii(bounds.width / 2))
        let w = Double(shown.width) / info.scale, h = Double(shown.height) / info.scale
        context.draw(shown, in: Rect(x: bounds.midX - w / 2, y: bounds.midY - h / 2, width: w, height: h))
        context.restoreClip()
    }
}
