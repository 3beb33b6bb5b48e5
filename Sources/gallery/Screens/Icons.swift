import Tessera

/// Small marks drawn with the drawing kit: a pin for pinned chats, a crossed speaker for muted ones.
final class IconNode: Node, NodeDrawing, @unchecked Sendable {
    enum Kind: Sendable { case pin, muted }
    struct Parameters: Sendable { var kind: Kind; var color: Color }
    let kind: Kind
    let color: ThemeColor

    init(_ kind: Kind, color: ThemeColor = Palette.secondary) {
        self.kind = kind
        self.color = color
        super.init()
        style.preferredSize = Size(width: 14, height: 14)
    }

    func drawParameters() -> Parameters { Parameters(kind: kind, color: themeColor(color)) }

    static func draw(_ p: Parameters, in context: inout BitmapContext, info: DrawInfo) {
        let b = info.bounds
        let s = min(b.width, b.height)
        switch p.kind {
        case .pin:
            // Head, then a needle made of shrinking steps.
            context.fillRoundedRect(Rect(x: s * 0.25, y: s * 0.05, width: s * 0.5, height: s * 0.42),
                                    radii: CornerRadii(s * 0.12), color: p.color)
            context.fill(Rect(x: s * 0.15, y: s * 0.45, width: s * 0.7, height: s * 0.1), color: p.color)
            context.fill(Rect(x: s * 0.45, y: s * 0.55, width: s * 0.1, height: s * 0.4), color: p.color)
        case .muted:
            // A speaker: a box and a flared cone, with a slash across.
            context.fill(Rect(x: s * 0.1, y: s * 0.35, width: s * 0.2, height: s * 0.3), color: p.color)
            for i in 0..<4 {
                let t = Double(i) / 4
                context.fill(Rect(x: s * (0.3 + 0.08 * Double(i)), y: s * (0.35 - 0.07 * Double(i + 1)),
                                  width: s * 0.08, height: s * (0.3 + 0.14 * Double(i + 1))), color: p.color)
                _ = t
            }
            for i in 0..<8 {
                let t = Double(i) / 8
                context.fill(Rect(x: s * (0.62 + 0.3 * t), y: s * (0.2 + 0.6 * t), width: s * 0.09, height: s * 0.09),
                             color: p.color)
            }
        }
    }
}
