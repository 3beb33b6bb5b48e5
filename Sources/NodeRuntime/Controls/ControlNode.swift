public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// The states a control is in. `normal` is the empty set.
/// - Thread: any (a value)
public struct ControlState: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// No other state.
    public static let normal: ControlState = []
    /// Pressed, with the pointer inside (or held with Space while focused).
    public static let highlighted = ControlState(rawValue: 1 << 0)
    /// Chosen (a toggle that is on, the current tab).
    public static let selected = ControlState(rawValue: 1 << 1)
    /// Takes no input, no focus, and shows it.
    public static let disabled = ControlState(rawValue: 1 << 2)
    /// The pointer is over it, with no button down.
    public static let hovered = ControlState(rawValue: 1 << 3)
    /// It has the keyboard focus.
    public static let focused = ControlState(rawValue: 1 << 4)
}

/// What a control reports to its targets.
/// - Thread: any (a value)
public struct ControlEvents: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// A press began inside.
    public static let touchDown = ControlEvents(rawValue: 1 << 0)
    /// A press moved, inside the control's tracking area.
    public static let touchDragInside = ControlEvents(rawValue: 1 << 1)
    /// A press moved, outside the tracking area.
    public static let touchDragOutside = ControlEvents(rawValue: 1 << 2)
    /// A press crossed into the tracking area.
    public static let touchDragEnter = ControlEvents(rawValue: 1 << 3)
    /// A press crossed out of the tracking area.
    public static let touchDragExit = ControlEvents(rawValue: 1 << 4)
    /// A press ended inside.
    public static let touchUpInside = ControlEvents(rawValue: 1 << 5)
    /// A press ended outside.
    public static let touchUpOutside = ControlEvents(rawValue: 1 << 6)
    /// A press was taken away (a gesture of an ancestor claimed it, the node left the screen).
    public static let touchCancel = ControlEvents(rawValue: 1 << 7)
    /// The control's value changed (a switch flipped).
    public static let valueChanged = ControlEvents(rawValue: 1 << 8)
    /// The control was activated: a press released inside, or Space or Enter while it has focus.
    /// The one event most targets want.
    public static let primaryActionTriggered = ControlEvents(rawValue: 1 << 9)

    public static let allTouchEvents: ControlEvents = [.touchDown, .touchDragInside, .touchDragOutside, .touchDragEnter,
                                                       .touchDragExit, .touchUpInside, .touchUpOutside, .touchCancel]
    public static let all: ControlEvents = allTouchEvents.union([.valueChanged, .primaryActionTriggered])
}

/// A node people press: it tracks a press from the primary button (highlighted while the pointer is
/// inside its tracking area, which reaches `trackingSlop` points past its bounds), takes the keyboard
/// focus when enabled (Tab reaches it; Space and Enter activate it), knows when the pointer hovers it,
/// and tells its targets what happened (`addTarget(for:action:)`). Subclasses show the state in
/// `controlStateDidChange()`; `ButtonNode` is one.
///
/// `isEnabled` and `isSelected` may be set from any thread: the state change reaches
/// `controlStateDidChange()` on the UI thread (at once there, else at the next frame). Targets,
/// tracking and focus belong to the UI thread.
/// - Thread: any for `isEnabled`, `isSelected`, `controlState`; main for the rest.
open class ControlNode: Node, @unchecked Sendable {
    // MARK: Accessibility

    /// A control is an element. - Thread: any
    open override var isAccessibilityElementByDefault: Bool { true }

    /// A button, pressable, focusable, with its selected and disabled states; labelled by the texts
    /// inside it. - Thread: main
    open override func accessibilityDefaults() -> AccessibilityDescription {
        var states: AccessibilityStates = [.focusable]
        if !isEnabled { states.insert(.disabled) }
        if isSelected { states.insert(.selected) }
        return AccessibilityDescription(role: .button, label: Node.accessibilityText(under: self), states: states,
                                        actions: [.press], exposesChildren: false)
    }

    /// `.press` activates the control as Space does (`primaryActionTriggered`). - Thread: main
    open override func performAccessibilityAction(_ action: AccessibilityAction) -> Bool {
        guard action == .press else { return super.performAccessibilityAction(action) }
        guard isEnabled else { return false }
        activate()
        sendActions(for: .primaryActionTriggered)
        return true
    }

    /// A registered target: remove it with `removeTarget(_:)`.
    public struct Target: Hashable, Sendable {
        fileprivate let id: Int
    }

    private struct Flags {
        var isEnabled = true
        var isSelected = false
        var isHighlighted = false
        var isHovered = false
        var isFocused = false
        var trackingSlop = 24.0
        /// A state change waits for the UI thread.
        var updateQueued = false
    }

    private let flags = Locked(Flags())
    /// The targets, in the order they were added. (main thread only)
    @MainActor private var targets: [(id: Int, events: ControlEvents, action: @MainActor (ControlNode, ControlEvents) -> Void)] = []
    @MainActor private var nextTargetID = 0
    /// The press being tracked: inside the tracking area at its last move. (main thread only)
    @MainActor private var trackingInside: Bool?
    /// The state last handed to `controlStateDidChange`. (main thread only)
    @MainActor private var shownState: ControlState?

    /// Points past the bounds within which a press still counts as inside. Default 24. - Thread: any
    public var trackingSlop: Double {
        get { flags.withLock { $0.trackingSlop } }
        set { flags.withLock { $0.trackingSlop = newValue.isFinite ? max(0, newValue) : 0 } }
    }

    public override init() {
        super.init()
        isUserInteractionEnabled = true
        cursor = .hand
    }

    // MARK: State (any thread)

    /// A disabled control takes no presses, keys or focus, and shows `.disabled`. - Thread: any
    public var isEnabled: Bool {
        get { flags.withLock { $0.isEnabled } }
        set {
            guard update({ $0.isEnabled = newValue }) else { return }
            isUserInteractionEnabled = newValue
            cursor = newValue ? .hand : nil
            if !newValue {
                runtime.mainQueue.performOrEnqueue { [self] in
                    cancelTracking()
                    if nodeHost?.focusedNode === self { nodeHost?.focus(nil) }
                }
            }
        }
    }

    /// Chosen: a toggle that is on, the current tab. - Thread: any
    public var isSelected: Bool {
        get { flags.withLock { $0.isSelected } }
        set { update { $0.isSelected = newValue } }
    }

    /// Pressed with the pointer inside, or held with Space. - Thread: any
    public var isHighlighted: Bool { flags.withLock { $0.isHighlighted } }

    /// The control's state as it is now. - Thread: any
    public var controlState: ControlState {
        flags.withLock { f in
            var state: ControlState = []
            if !f.isEnabled { state.insert(.disabled) }
            if f.isSelected { state.insert(.selected) }
            if f.isHighlighted && f.isEnabled { state.insert(.highlighted) }
            if f.isHovered && f.isEnabled { state.insert(.hovered) }
            if f.isFocused && f.isEnabled { state.insert(.focused) }
            return state
        }
    }

    /// Changes the flags; when the state changed, `controlStateDidChange` follows on the UI thread.
    /// Returns whether anything changed.
    @discardableResult
    private func update(_ change: (inout Flags) -> Void) -> Bool {
        let before = controlState
        let queue = flags.withLock { f -> Bool in
            change(&f)
            guard !f.updateQueued else { return false }
            f.updateQueued = true
            return true
        }
        let changed = controlState != before
        if queue {
            runtime.mainQueue.performOrEnqueue { [self] in
                flags.withLock { $0.updateQueued = false }
                let state = controlState
                guard state != shownState else { return }
                shownState = state
                controlStateDidChange()
            }
        }
        return changed
    }

    /// The state changed: show it. Called on the UI thread, once per change (changes from other
    /// threads between two frames come as one). Read `controlState`. The default does nothing.
    /// - Thread: main
    @MainActor
    open func controlStateDidChange() {}

    // MARK: Targets (UI thread)

    /// Calls `action` on the UI thread whenever one of `events` happens, with the control and the
    /// events that happened (those of `events` among them).
    /// - Thread: main
    @MainActor
    @discardableResult
    public func addTarget(for events: ControlEvents,
                          action: @escaping @MainActor (ControlNode, ControlEvents) -> Void) -> Target {
        UIThread.precondition("ControlNode.addTarget")
        nextTargetID += 1
        targets.append((nextTargetID, events, action))
        return Target(id: nextTargetID)
    }

    /// Stops a target from being called. - Thread: main
    @MainActor
    public func removeTarget(_ target: Target) {
        UIThread.precondition("ControlNode.removeTarget")
        targets.removeAll { $0.id == target.id }
    }

    /// Calls the targets registered for any of `events`, in the order they were added; a disabled
    /// control sends nothing. - Thread: main
    @MainActor
    public func sendActions(for events: ControlEvents) {
        UIThread.precondition("ControlNode.sendActions")
        guard isEnabled, !events.isEmpty else { return }
        // A target may add or remove targets: the list as it was when the event happened is called.
        for target in targets where !target.events.isDisjoint(with: events) {
            target.action(self, target.events.intersection(events))
        }
    }

    // MARK: Pointer (UI thread)

    @MainActor
    private func isInsideTrackingArea(_ touch: Touch) -> Bool {
        let point = convertFromRoot(touch.location)
        let slop = trackingSlop
        return bounds.insetBy(dx: -slop, dy: -slop).contains(point)
    }

    @MainActor
    open override func touchesBegan(_ touch: Touch) {
        guard isEnabled, touch.button == .primary else { return }
        trackingInside = true
        update { $0.isHighlighted = true }
        sendActions(for: .touchDown)
    }

    @MainActor
    open override func touchesMoved(_ touch: Touch) {
        guard let wasInside = trackingInside else { return }
        let inside = isInsideTrackingArea(touch)
        trackingInside = inside
        update { $0.isHighlighted = inside }
        var events: ControlEvents = inside ? .touchDragInside : .touchDragOutside
        if inside != wasInside { events.insert(inside ? .touchDragEnter : .touchDragExit) }
        sendActions(for: events)
    }

    @MainActor
    open override func touchesEnded(_ touch: Touch) {
        guard trackingInside != nil else { return }
        let inside = isInsideTrackingArea(touch)
        trackingInside = nil
        update { $0.isHighlighted = false }
        guard inside else {
            sendActions(for: .touchUpOutside)
            return
        }
        sendActions(for: .touchUpInside)
        activate()
        sendActions(for: .primaryActionTriggered)
    }

    /// The control was activated (a press released inside, or Space or Enter), before its targets
    /// hear `.primaryActionTriggered`: a control with a value changes it here (and sends
    /// `.valueChanged`). The default does nothing. - Thread: main
    @MainActor
    open func activate() {}

    @MainActor
    open override func touchesCancelled(_ touch: Touch) {
        guard trackingInside != nil else { return }
        cancelTracking()
        sendActions(for: .touchCancel)
    }

    @MainActor
    private func cancelTracking() {
        trackingInside = nil
        update { $0.isHighlighted = false }
    }

    @MainActor
    open override func pointerEntered() { update { $0.isHovered = true } }

    @MainActor
    open override func pointerExited() { update { $0.isHovered = false } }

    // MARK: Keys and focus (UI thread)

    @MainActor
    open override var canBecomeFocused: Bool { isEnabled }

    @MainActor
    open override func didBecomeFocused() { update { $0.isFocused = true } }

    @MainActor
    open override func didResignFocus() { update { $0.isFocused = false } }

    /// Space and Enter activate the control (`primaryActionTriggered`).
    @MainActor
    open override func keyDown(_ key: Key, modifiers: KeyModifiers) -> Bool {
        guard isEnabled, modifiers.isDisjoint(with: [.control, .alt, .command]) else { return false }
        switch key {
        case .space, .enter:
            activate()
            sendActions(for: .primaryActionTriggered)
            return true
        default:
            return false
        }
    }

    @MainActor
    open override func didExitVisibleState() {
        super.didExitVisibleState()
        if trackingInside != nil {
            cancelTracking()
            sendActions(for: .touchCancel)
        }
        update { $0.isHovered = false }
    }
}
