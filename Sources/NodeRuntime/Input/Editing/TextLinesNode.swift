import Compositor

/// Draws an editable field's text: the lines its window layout holds (a few around what the field
/// shows), each where it is in the whole text, the node's top edge at `top` points into the text. The
/// field moves the node to scroll and gives it another window when the view leaves this one, so a
/// field holding a long message draws a few lines, not the message.
/// - Thread: `show` any; drawing on a display worker, from the parameters captured on the main thread.
final class TextLinesNode: Node, NodeDrawing, @unchecked Sendable {
    struct DrawParameters: Sendable {
        var layout: TextLayout?
        /// Where the node's top edge is in the text, in points.
        var top: Double
    }

    /// What is drawn; guarded by its lock, out of a draw function's reach.
    private let lockedShown = Locked(DrawParameters(layout: nil, top: 0))
    private var shown: Locked<DrawParameters> {
        DrawScope.check(self)
        return lockedShown
    }

    /// The lines drawn now. - Thread: any
    var layout: TextLayout? { shown.withLock { $0.layout } }

    /// Draws `layout`'s lines with the node's top edge `top` points into the text; draws again only
    /// when either changed. - Thread: any
    func show(_ layout: TextLayout, top: Double) {
        let replaced = shown.withLock { shown -> DrawParameters? in
            guard shown.layout !== layout || shown.top != top else { return nil }
            defer { shown = DrawParameters(layout: layout, top: top) }
            return shown
        }
        guard let replaced else { return }
        withExtendedLifetime(replaced) {}  // the old lines are let go here, after unlocking
        setNeedsDisplay()
    }

    func drawParameters() -> DrawParameters { shown.withLock { $0 } }

    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        guard let layout = parameters.layout else { return }
        TextRenderer.draw(layout, in: &context, at: Point(x: 0, y: -parameters.top), boxWidth: info.bounds.width,
                          fonts: layout.fonts, isCancelled: info.isCancelled)
    }
}
