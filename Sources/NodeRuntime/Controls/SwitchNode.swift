public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// An on/off switch: a rounded track in `onColor` or `offColor` with a round thumb at the end that
/// matches. Activating it (a press released inside, Space or Enter) flips `isOn`, slides the thumb and
/// sends `.valueChanged`, then `.primaryActionTriggered`. Setting `isOn` in code, from any thread,
/// sends nothing. Its size is 44×24 points unless its layout gives it another.
/// - Thread: any for its properties; see `ControlNode`.
open class SwitchNode: ControlNode, @unchecked Sendable {
    /// A switch: checkable, checked when on, its value "on" or "off". - Thread: main
    open override func accessibilityDefaults() -> AccessibilityDescription {
        var description = super.accessibilityDefaults()
        description.role = .switch
        description.states.insert(.checkable)
        if isOn { description.states.insert(.checked) }
        description.value = isOn ? "on" : "off"
        return description
    }

    private struct Look {
        var isOn = false
        var onColor = Color(rgb: 0x2E7D32)
        var offColor = Color(rgb: 0xB0B4BA)
        var disabledAlpha = 0.45
    }

    /// The round part that slides.
    public let thumb = Node()
    private let look = Locked(Look())
    /// How long the thumb slides when the user flips the switch, in seconds.
    public static let slideDuration = 0.15

    /// A switch that is `isOn`. - Thread: any
    public init(isOn: Bool = false) {
        super.init()
        look.withLock { $0.isOn = isOn }
        preferredSize = Size(width: 44, height: 24)
        thumb.backgroundColor = .white
        addSubnode(thumb)
        applyLook()
    }

    /// On or off. Setting it moves the thumb without an animation and sends nothing. - Thread: any
    public var isOn: Bool {
        get { look.withLock { $0.isOn } }
        set {
            let changed = look.withLock { l -> Bool in
                defer { l.isOn = newValue }
                return l.isOn != newValue
            }
            guard changed else { return }
            applyLook()
            setNeedsLayout()
        }
    }

    /// The track's colour when on. - Thread: any
    public var onColor: Color {
        get { look.withLock { $0.onColor } }
        set { look.withLock { $0.onColor = newValue }; applyLook() }
    }

    /// The track's colour when off. - Thread: any
    public var offColor: Color {
        get { look.withLock { $0.offColor } }
        set { look.withLock { $0.offColor = newValue }; applyLook() }
    }

    private func applyLook() {
        let (on, onColor, offColor, alpha) = look.withLock { ($0.isOn, $0.onColor, $0.offColor, $0.disabledAlpha) }
        backgroundColor = on ? onColor : offColor
        opacity = isEnabled ? 1 : alpha
    }

    /// Where the thumb goes in `bounds` for `on`.
    private static func thumbFrame(in bounds: Rect, on: Bool) -> Rect {
        let inset = 2.0
        let side = max(0, min(bounds.height, bounds.width) - 2 * inset)
        let x = on ? bounds.width - inset - side : inset
        return Rect(x: x, y: (bounds.height - side) / 2, width: side, height: side)
    }

    @MainActor
    open override func layout() {
        super.layout()
        let bounds = self.bounds
        cornerRadius = bounds.height / 2
        thumb.cornerRadius = max(0, bounds.height / 2 - 2)
        thumb.frame = Self.thumbFrame(in: bounds, on: isOn)
    }

    @MainActor
    open override func controlStateDidChange() {
        super.controlStateDidChange()
        applyLook()
    }

    /// Flips the switch, slides the thumb and sends `.valueChanged`.
    @MainActor
    open override func activate() {
        let from = Self.thumbFrame(in: bounds, on: isOn)
        isOn.toggle()
        let to = Self.thumbFrame(in: bounds, on: isOn)
        thumb.frame = to
        if let layer = thumb.layerIfLoaded {
            runtime.animator.animate(layer, .origin(from: from.origin, to: to.origin), duration: Self.slideDuration)
        }
        sendActions(for: .valueChanged)
    }
}
