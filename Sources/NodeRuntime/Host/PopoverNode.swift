public import Compositor

/// A card that holds content beside an anchor: what a popover, a drop-down's panel or a picker is
/// drawn in. The card has the theme's background, a one-point edge in the theme's separator colour,
/// rounded corners and `contentInsets` around the content; it follows the appearance.
///
/// ```swift
/// let picker = host.presentPopover(EmojiGridNode(), from: button.frameInWindow, side: .above)
/// ```
/// - Thread: any (shown on the UI thread, through `NodeHost.presentOverlay` or `presentPopover`).
public final class PopoverNode: Node, @unchecked Sendable {
    /// The node the card holds.
    public let content: Node
    /// Space between the card's edge and the content.
    public let contentInsets: EdgeInsets
    /// The card inside the edge.
    private let card = Node()

    public init(content: Node, contentInsets: EdgeInsets = EdgeInsets(top: 10, left: 10, bottom: 10, right: 10)) {
        self.content = content
        self.contentInsets = contentInsets
        super.init()
        debugName = "popover"
        automaticallyManagesSubnodes = true
        isUserInteractionEnabled = true
        cornerRadius = 10
        themedBackgroundColor = .separator
        card.cornerRadius = 9
        card.themedBackgroundColor = .background
        card.isUserInteractionEnabled = true
        card.debugName = "popover card"
    }

    public override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        // The edge is the outer node's colour showing one point around the card.
        InsetSpec(EdgeInsets(top: 1, left: 1, bottom: 1, right: 1),
                  child: BackgroundSpec(child: InsetSpec(contentInsets, child: content), background: card))
    }
}

extension NodeHost {
    /// Shows `content` in a `PopoverNode` beside `anchor` (window points) as a popup overlay: a press
    /// outside, Escape or the window's focus loss ends it, and the focus goes into it (to the first
    /// node that takes it) and back when it ends. The popover flips to the other side and slides to
    /// stay inside the window.
    /// - Returns: the overlay, to `dismiss()` it or hear its end (`onDismiss`).
    /// - Thread: main
    @discardableResult
    public func presentPopover(_ content: Node, from anchor: Rect, side: PopupPositioner.Side = .below,
                               alignment: PopupPositioner.Alignment = .center) -> Overlay {
        presentOverlay(PopoverNode(content: content), kind: .popup,
                       positioner: PopupPositioner(anchor: anchor, side: side, alignment: alignment, gap: 4))
    }
}
