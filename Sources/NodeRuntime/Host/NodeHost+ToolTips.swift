import Compositor

extension NodeHost {
    /// How long the pointer rests on a node before its `toolTip` shows, in seconds; once one has
    /// shown, moving to another node with a tooltip shows that one at once (for `toolTipBrowseWindow`).
    public var toolTipDelay: Double {
        get { toolTips.delay }
        set { toolTips.delay = newValue.isFinite ? max(0, newValue) : 0.5 }
    }

    /// The tooltip shown now, if any. - Thread: main
    public var shownToolTip: Overlay? { toolTips.shown }
}

/// Shows the `toolTip` of the node the pointer rests on, after `delay`, as a tooltip overlay below
/// the pointer; hides it when the pointer leaves the node or a key, a press or the wheel arrives
/// (and then shows none for that node until the pointer leaves it). A frame participant, so the
/// event loop wakes for the delay's end and sleeps otherwise.
/// - Thread: main, every member.
@MainActor
final class ToolTipTracker: FrameParticipant {
    private unowned let host: NodeHost
    var delay = 0.5
    /// After a tooltip hid, another shows without the delay for this long (moving along a toolbar).
    static let browseWindow = 0.5
    private weak var target: Node?
    private var text: String?
    private var due: Double?
    private var anchor: Point?
    private(set) var shown: Overlay?
    /// Input arrived over `target`: nothing shows for it until the pointer leaves it.
    private var suppressed = false
    private var lastHidden = -Double.infinity
    private var registered = false

    init(host: NodeHost) { self.host = host }

    /// The hovered chain changed (or the pointer moved): finds the nearest node with a tooltip.
    func hoverChanged(chain: [Node], pointer: Point?) {
        let owner = chain.first { $0.toolTip != nil }
        guard owner !== target || owner?.toolTip != text else {
            // Still over the same node: a tooltip not shown yet waits for the pointer to rest.
            if shown == nil, !suppressed, owner != nil, let pointer, pointer != anchor {
                anchor = pointer
                due = host.time + delay
            }
            return
        }
        let wasShowing = shown != nil
        hide()
        suppressed = false
        target = owner
        text = owner?.toolTip
        anchor = pointer
        guard owner != nil, pointer != nil else { due = nil; return }
        let browsing = wasShowing || host.time - lastHidden < Self.browseWindow
        due = host.time + (browsing ? 0 : delay)
        if !registered {
            registered = true
            host.addFrameParticipant(self)
        }
    }

    /// A key, a press or the wheel: the tooltip goes, and stays away while the pointer is on its node.
    func inputArrived() {
        guard target != nil else { return }
        hide()
        suppressed = true
        due = nil
    }

    private func hide() {
        guard let overlay = shown else { return }
        shown = nil
        lastHidden = host.time
        overlay.dismiss()
    }

    func frameWillStartDisplays(at time: Double) {
        if let overlay = shown, !overlay.isPresented { shown = nil }
        guard let due, time >= due, shown == nil, !suppressed, let text, let anchor,
              let target, target.interfaceState.contains(.visible) else { return }
        self.due = nil
        let bubble = ToolTipNode(text: text)
        // Below the pointer, clear of its arrow (a cursor is about 20 points tall).
        let positioner = PopupPositioner(anchor: Rect(x: anchor.x, y: anchor.y, width: 1, height: 20), side: .below,
                                         alignment: .start, gap: 2)
        let overlay = host.presentOverlay(bubble, kind: .tooltip, positioner: positioner)
        overlay.onDismiss = { [weak self] _ in
            guard let self, self.shown === overlay else { return }
            self.shown = nil
            self.lastHidden = self.host.time
        }
        shown = overlay
    }

    func frameWillComposite(_ record: inout FrameRecord) {}
    var isSettled: Bool { true }
    func nextFrameTime(after time: Double) -> Double? {
        guard let due, shown == nil, !suppressed, target != nil else { return nil }
        return max(due, time)
    }
}

/// A tooltip's bubble: the text on the theme's label colour inverted, with rounded corners, at most
/// 320 points wide.
@MainActor
final class ToolTipNode: Node, @unchecked Sendable {
    let textNode = TextNode()

    init(text: String) {
        super.init()
        debugName = "tooltip"
        isUserInteractionEnabled = false
        automaticallyManagesSubnodes = true
        cornerRadius = 5
        themedBackgroundColor = .label
        textNode.attributedText = AttributedText(text, attributes: .themed(font: .system(size: 13), .background))
        textNode.options = TextLayoutOptions(maximumNumberOfLines: 6)
        accessibilityRole = .toolTip
        accessibilityLabel = text
        isAccessibilityElement = true
        style.maxWidth = .points(320)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
         InsetSpec(EdgeInsets(top: 5, left: 8, bottom: 5, right: 8), child: textNode)
    }
}
