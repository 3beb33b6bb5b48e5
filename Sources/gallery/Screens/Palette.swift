import Tessera

/// The gallery's colours by name, and its theme: light (the gallery's original colours), dark, and a
/// high-contrast variant of each. Nodes ask for names (`themeColor(_:)`, `themedBackgroundColor`,
/// `Palette.text`), so every screen follows the desktop's appearance live.
enum Palette {
    static let background = ThemeColor.background
    static let chatBackground = ThemeColor("gallery.chatBackground")
    static let groupedBackground = ThemeColor.secondaryBackground
    static let separator = ThemeColor.separator
    static let title = ThemeColor.label
    static let secondary = ThemeColor.secondaryLabel
    static let accent = ThemeColor.accent
    static let onAccent = ThemeColor.onAccent
    static let fieldPill = ThemeColor.fill
    static let mutedBadge = ThemeColor("gallery.mutedBadge")
    static let incomingBubble = ThemeColor("gallery.incomingBubble")
    static let outgoingBubble = ThemeColor("gallery.outgoingBubble")
    static let outgoingMeta = ThemeColor("gallery.outgoingMeta")
    static let tabBar = ThemeColor.bar
    static let tabBarLine = ThemeColor("gallery.tabBarLine")
    static let dayPill = ThemeColor("gallery.dayPill")
    static let photoPlaceholder = ThemeColor("gallery.photoPlaceholder")
    static let avatarPlaceholder = ThemeColor("gallery.avatarPlaceholder")
    static let highlight = ThemeColor("gallery.highlight")
    static let placeholder = ThemeColor("gallery.placeholder")
    /// The photo grid's dark ground, the same in every appearance.
    static let photosBackground = ThemeColor("gallery.photosBackground")

    /// The gallery's theme: Tessera's standard names (whose light colours are the gallery's) and the
    /// gallery's own. `GalleryApp` makes it the runtime's before the first screen.
    static let theme = Theme.standard.adding(
        light: ThemeColors([
            chatBackground: Color(rgb: 0xDCE6EE), mutedBadge: Color(rgb: 0xAAB2BB), incomingBubble: Color(rgb: 0xFFFFFF),
            outgoingBubble: Color(rgb: 0xE3FEE0), outgoingMeta: Color(rgb: 0x4FAE4E), tabBarLine: Color(rgb: 0xD0D5DB),
            dayPill: Color(rgb: 0x6B8296, alpha: 200), photoPlaceholder: Color(rgb: 0xC9D3DD),
            avatarPlaceholder: Color(rgb: 0xE4E7EC), highlight: Color(rgb: 0xFFF3A3), placeholder: Color(rgb: 0x8A94A3),
            photosBackground: Color(rgb: 0x12161B),
        ]),
        dark: ThemeColors([
            chatBackground: Color(rgb: 0x0E1621), mutedBadge: Color(rgb: 0x3E546A), incomingBubble: Color(rgb: 0x182533),
            outgoingBubble: Color(rgb: 0x2B5278), outgoingMeta: Color(rgb: 0x8CC6F5), tabBarLine: Color(rgb: 0x0B121A),
            dayPill: Color(rgb: 0x1E2C3A, alpha: 220), photoPlaceholder: Color(rgb: 0x2A3A4A),
            avatarPlaceholder: Color(rgb: 0x2A3A4A), highlight: Color(rgb: 0x6B5A00), placeholder: Color(rgb: 0x6C7883),
        ]),
        highContrastLight: ThemeColors([
            chatBackground: Color(rgb: 0xD0D7DE), mutedBadge: Color(rgb: 0x4A4F55), incomingBubble: Color(rgb: 0xFFFFFF),
            outgoingBubble: Color(rgb: 0xC8F0C4), outgoingMeta: Color(rgb: 0x145214), tabBarLine: Color(rgb: 0x000000),
            dayPill: Color(rgb: 0x000000), highlight: Color(rgb: 0xFFE14D), placeholder: Color(rgb: 0x30363D),
        ]),
        highContrastDark: ThemeColors([
            chatBackground: Color(rgb: 0x000000), mutedBadge: Color(rgb: 0x8A8A8A), incomingBubble: Color(rgb: 0x262626),
            outgoingBubble: Color(rgb: 0x0B3D91), outgoingMeta: Color(rgb: 0xCDE8FF), tabBarLine: Color(rgb: 0xFFFFFF),
            dayPill: Color(rgb: 0x333333), highlight: Color(rgb: 0x806C00), placeholder: Color(rgb: 0xD0D0D0),
        ]))

    /// Avatar colours for chats without a photo, picked by chat id (the same in every appearance:
    /// white initials read on each).
    static let avatarColors: [Color] = [
        Color(rgb: 0xE17076), Color(rgb: 0xFAA774), Color(rgb: 0xA695E7), Color(rgb: 0x7BC862),
        Color(rgb: 0x6EC9CB), Color(rgb: 0x65AADD), Color(rgb: 0xEE7AAE),
    ]

    /// The colour `name` has now (recording nothing: a node that follows changes asks `themeColor`).
    static func color(_ name: ThemeColor) -> Color { Runtime.shared.resolveColor(name) }

    /// Text in the system font whose colour is the theme's `color` (followed live by text nodes).
    static func text(_ size: Double, bold: Bool = false, color: ThemeColor = title) -> TextAttributes {
        TextAttributes.themed(font: .system(size: size, bold: bold), color)
    }

    /// Text in a fixed colour (white on a coloured badge or photo).
    static func text(_ size: Double, bold: Bool = false, fixed color: Color) -> TextAttributes {
        TextAttributes(font: .system(size: size, bold: bold), color: color)
    }
}

extension Palette {
    /// The rounded grey field behind the composer and the search field.
    static func makeFieldPill() -> Node {
        let pill = Node()
        pill.themedBackgroundColor = fieldPill
        pill.cornerRadius = 17
        pill.cornerRoundingMode = .compositorClip
        return pill
    }

    /// A text field in its pill (`makeFieldPill`), with the pill's padding around the text.
    static func fieldInPill(_ field: Node, _ pill: Node) -> BackgroundSpec {
        field.flexShrink(0).inset(EdgeInsets(top: 8, left: 14, bottom: 8, right: 14)).background(pill)
    }

    /// Gives `field` the theme's placeholder colour (the field follows the appearance's colours and text
    /// scale by itself) and the accent's caret; the caret's colour is fixed, so its bar calls this again
    /// from `appearanceDidChange`.
    static func restyle(_ field: EditableTextNode) {
        if field.placeholderAttributes.themeColor != Palette.placeholder {
            var placeholder = field.placeholderAttributes
            placeholder.themeColor = Palette.placeholder
            placeholder.color = color(Palette.placeholder)
            field.placeholderAttributes = placeholder
        }
        field.caretColor = color(accent)
    }
}

extension Color {
    /// This colour moved `fraction` of the way to `other` (opaque).
    func mixed(with other: Color, by fraction: Double) -> Color {
        func mix(_ a: UInt8, _ b: UInt8) -> UInt8 { UInt8((Double(a) + (Double(b) - Double(a)) * fraction).rounded()) }
        return Color(red: mix(red, other.red), green: mix(green, other.green), blue: mix(blue, other.blue))
    }
}
