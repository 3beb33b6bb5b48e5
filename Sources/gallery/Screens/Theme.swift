import Tessera

/// Colours and fonts shared by the gallery's screens.
enum Theme {
    static let background = Color(rgb: 0xFFFFFF)
    static let chatBackground = Color(rgb: 0xDCE6EE)
    static let separator = Color(rgb: 0xE3E6EA)
    static let title = Color(rgb: 0x111418)
    static let secondary = Color(rgb: 0x7D8590)
    static let accent = Color(rgb: 0x3390EC)
    static let mutedBadge = Color(rgb: 0xAAB2BB)
    static let incomingBubble = Color(rgb: 0xFFFFFF)
    static let outgoingBubble = Color(rgb: 0xE3FEE0)
    static let outgoingMeta = Color(rgb: 0x4FAE4E)
    static let tabBar = Color(rgb: 0xF7F8FA)

    /// Avatar colours for chats without a photo, picked by chat id.
    static let avatarColors: [Color] = [
        Color(rgb: 0xE17076), Color(rgb: 0xFAA774), Color(rgb: 0xA695E7), Color(rgb: 0x7BC862),
        Color(rgb: 0x6EC9CB), Color(rgb: 0x65AADD), Color(rgb: 0xEE7AAE),
    ]

    static func text(_ size: Double, bold: Bool = false, color: Color = title) -> TextAttributes {
        TextAttributes(font: .system(size: size, bold: bold), color: color)
    }
}

extension Theme {
    /// The rounded grey field behind the composer and the search field.
    static func makeFieldPill() -> Node {
        let pill = Node()
        pill.backgroundColor = Color(rgb: 0xF1F3F5)
        pill.cornerRadius = 17
        pill.cornerRoundingMode = .compositorClip
        return pill
    }

    /// A text field in its pill (`makeFieldPill`), with the pill's padding around the text.
    static func fieldInPill(_ field: Node, _ pill: Node) -> BackgroundSpec {
        field.flexShrink(0).inset(EdgeInsets(top: 8, left: 14, bottom: 8, right: 14)).background(pill)
    }
}
