public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// A control showing a title, an image or both, centred inside `contentInsets`, with an appearance
/// per state: the title (`setTitle`), the image (`setImage`) and the background (`setBackgroundColor`)
/// for `.normal`, `.highlighted`, `.selected`, `.disabled`, `.hovered`, `.focused` or a combination.
/// A state without its own value takes the value of the closest state that has one: the set of
/// states given (a subset of the current ones) that ranks highest, disabled first, then highlighted,
/// selected, hovered and focused; `.normal` is the last fallback.
///
/// Title and image are drawn on workers like any `TextNode` and `ImageNode`; the background is the
/// layer's, so a press changes no bitmap unless the title or image does. Activate it with
/// `addTarget(for: .primaryActionTriggered) { … }`.
/// - Thread: any, except where `ControlNode` says otherwise.
open class ButtonNode: ControlNode, @unchecked Sendable {
    /// Where the image goes relative to the title.
    public enum ImagePlacement: Sendable, Hashable {
        case leading, trailing, top, bottom
    }

    private struct Appearance {
        var titles: [ControlState: AttributedText] = [:]
        var images: [ControlState: ImageSource] = [:]
        var backgrounds: [ControlState: Color] = [:]
        var contentInsets = EdgeInsets(top: 8, left: 14, bottom: 8, right: 14)
        var contentSpacing = 6.0
        var imageSize: Size?
        var imagePlacement = ImagePlacement.leading
    }

    /// Shows the title of the current state.
    public let titleNode = TextNode()
    /// Shows the image of the current state.
    public let imageNode = ImageNode()
    private let appearance = Locked(Appearance())

    /// A button with `title` in `attributes` and `image`, both for `.normal`. - Thread: any
    public init(title: String? = nil, attributes: TextAttributes = TextAttributes(), image: ImageSource? = nil) {
        super.init()
        automaticallyManagesSubnodes = true
        imageNode.contentMode = .aspectFit
        appearance.withLock { a in
            if let title { a.titles[.normal] = AttributedText(title, attributes: attributes) }
            if let image { a.images[.normal] = image }
        }
        applyAppearance()
    }

    // MARK: Appearance per state (any thread)

    /// The title for `state` in one set of attributes; nil removes it. - Thread: any
    public func setTitle(_ title: String?, attributes: TextAttributes = TextAttributes(), for state: ControlState = .normal) {
        setAttributedTitle(title.map { AttributedText($0, attributes: attributes) }, for: state)
    }

    /// The title for `state`; nil removes it. - Thread: any
    public func setAttributedTitle(_ title: AttributedText?, for state: ControlState = .normal) {
        appearance.withLock { $0.titles[state] = title }
        applyAppearance()
    }

    /// The image for `state`; nil removes it. - Thread: any
    public func setImage(_ image: ImageSource?, for state: ControlState = .normal) {
        appearance.withLock { $0.images[state] = image }
        applyAppearance()
    }

    /// The background colour for `state`; nil removes it. - Thread: any
    public func setBackgroundColor(_ color: Color?, for state: ControlState = .normal) {
        appearance.withLock { $0.backgrounds[state] = color }
        applyAppearance()
    }

    /// The title shown in `state` (after the fallbacks). - Thread: any
    public func title(for state: ControlState) -> AttributedText? {
        appearance.withLock { Self.resolve($0.titles, state) }
    }

    /// The image shown in `state` (after the fallbacks). - Thread: any
    public func image(for state: ControlState) -> ImageSource? {
        appearance.withLock { Self.resolve($0.images, state) }
    }

    /// The background shown in `state` (after the fallbacks). - Thread: any
    public func backgroundColor(for state: ControlState) -> Color? {
        appearance.withLock { Self.resolve($0.backgrounds, state) }
    }

    /// Space between the content and the edges. Default: 8 points above and below, 14 at the sides.
    /// - Thread: any
    public var contentInsets: EdgeInsets {
        get { appearance.withLock { $0.contentInsets } }
        set { appearance.withLock { $0.contentInsets = newValue }; setNeedsLayout() }
    }

    /// Space between the image and the title. Default 6 points. - Thread: any
    public var contentSpacing: Double {
        get { appearance.withLock { $0.contentSpacing } }
        set { appearance.withLock { $0.contentSpacing = newValue.isFinite ? max(0, newValue) : 0 }; setNeedsLayout() }
    }

    /// The image's size; nil takes the image's natural size. - Thread: any
    public var imageSize: Size? {
        get { appearance.withLock { $0.imageSize } }
        set { appearance.withLock { $0.imageSize = newValue }; setNeedsLayout() }
    }

    /// Where the image goes relative to the title. Default: leading. - Thread: any
    public var imagePlacement: ImagePlacement {
        get { appearance.withLock { $0.imagePlacement } }
        set { appearance.withLock { $0.imagePlacement = newValue }; setNeedsLayout() }
    }

    /// The value for `state`: the entry whose states are all among `state` and rank highest.
    private static func resolve<Value>(_ values: [ControlState: Value], _ state: ControlState) -> Value? {
        func rank(_ s: ControlState) -> Int {
            (s.contains(.disabled) ? 16 : 0) + (s.contains(.highlighted) ? 8 : 0) + (s.contains(.selected) ? 4 : 0)
                + (s.contains(.hovered) ? 2 : 0) + (s.contains(.focused) ? 1 : 0)
        }
        return values.filter { state.isSuperset(of: $0.key) }.max { rank($0.key) < rank($1.key) }?.value
    }

    /// Shows the current state's title, image and background.
    private func applyAppearance() {
        let state = controlState
        let (title, image, background) = appearance.withLock {
            (Self.resolve($0.titles, state), Self.resolve($0.images, state), Self.resolve($0.backgrounds, state))
        }
        let newTitle = title ?? AttributedText()
        if titleNode.attributedText != newTitle { titleNode.attributedText = newTitle }
        if imageNode.source != image {
            imageNode.source = image
            setNeedsLayout()
        }
        if backgroundColor != background { backgroundColor = background }
    }

    @MainActor
    open override func controlStateDidChange() {
        super.controlStateDidChange()
        applyAppearance()
    }

    // MARK: Layout

    open override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        let (insets, spacing, imageSize, placement) = appearance.withLock {
            ($0.contentInsets, $0.contentSpacing, $0.imageSize, $0.imagePlacement)
        }
        var children: [any LayoutElement] = []
        if imageNode.source != nil {
            children.append(imageSize.map { imageNode.size($0) } ?? imageNode)
        }
        if !titleNode.attributedText.string.isEmpty { children.append(titleNode.flexShrink(1)) }
        if placement == .trailing || placement == .bottom { children.reverse() }
        let vertical = placement == .top || placement == .bottom
        let stack = StackSpec(direction: vertical ? .vertical : .horizontal, spacing: spacing,
                              justifyContent: .center, alignItems: .center, children: children)
        return stack.inset(insets)
    }
}
