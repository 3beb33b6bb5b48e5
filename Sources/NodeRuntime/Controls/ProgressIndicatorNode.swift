public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// A horizontal progress bar: a rounded track filled in the accent colour from its start to
/// `progress` (0…1), or, when `isIndeterminate`, a block of accent that slides along the track over
/// and over, for work whose length is unknown.
///
/// The indeterminate block moves only while the bar is in a window and visible: the bar is a frame
/// participant of its host that is unsettled (and so asks for frames) only while it is indeterminate,
/// has the visible interface state, neither it nor an ancestor is hidden, and the appearance does not
/// reduce motion. Hidden, removed from its window, or determinate, it asks for no frame, so an app at
/// rest stays at rest. With reduced motion it shows a still striped bar instead of the moving block.
/// The block's place is a function of the frame's time alone (`blockFrame(at:in:)`), so two bars move
/// together and a given frame time always looks the same.
///
/// Its height is 6 points and its width 160 unless its layout gives it others. It takes no input.
/// - Thread: any for its properties; main for layout and frames.
open class ProgressIndicatorNode: Node, @unchecked Sendable {
    // MARK: Accessibility

    /// A progress bar is an element. - Thread: any
    open override var isAccessibilityElementByDefault: Bool { true }

    /// A progress bar: its progress as a percentage ("30%") and as a range 0…1 (step 0.01); when
    /// indeterminate, busy, with no value or range. - Thread: main
    open override func accessibilityDefaults() -> AccessibilityDescription {
        let (progress, indeterminate) = look.withLock { ($0.progress, $0.isIndeterminate) }
        var description = AccessibilityDescription(role: .progressBar, label: Node.accessibilityText(under: self),
                                                   exposesChildren: false)
        if indeterminate {
            description.states.insert(.busy)
        } else {
            description.value = "\(Int((progress * 100).rounded()))%"
            description.valueRange = AccessibilityValueRange(minimum: 0, maximum: 1, current: progress, step: 0.01)
        }
        return description
    }

    private struct Look {
        var progress = 0.0
        var isIndeterminate = false
    }

    /// Guarded by its lock.
    private let look = Locked(Look())
    /// The last frame time the block was placed for. (main thread only)
    @MainActor private var blockTime = 0.0

    /// The track, behind the fill or the block; it clips them.
    public let trackNode = Node()
    /// The accent part: from the start to `progress`, or the sliding block when indeterminate.
    public let fillNode = Node()
    /// The still stripes shown instead of the block when the appearance reduces motion.
    let stripesNode = ProgressStripesNode()

    /// How long the block takes to cross the track, in seconds.
    public static let period = 1.5
    /// The block's width, as a fraction of the track's.
    public static let blockFraction = 0.3

    /// A bar at `progress` (clamped to 0…1, NaN as 0), or indeterminate. - Thread: any
    public init(progress: Double = 0, isIndeterminate: Bool = false) {
        super.init()
        look.withLock { $0 = Look(progress: Self.clamped(progress), isIndeterminate: isIndeterminate) }
        preferredSize = Size(width: 160, height: 6)
        trackNode.themedBackgroundColor = .separator
        trackNode.clipsToBounds = true
        fillNode.themedBackgroundColor = .accent
        stripesNode.isHidden = true
        addSubnode(trackNode)
        trackNode.addSubnode(fillNode)
        trackNode.addSubnode(stripesNode)
    }

    /// `progress` in 0…1; NaN is 0, ±∞ the nearer end.
    static func clamped(_ progress: Double) -> Double {
        progress.isNaN ? 0 : min(1, max(0, progress))
    }

    // MARK: Properties (any thread)

    /// How much is done, 0…1. Values outside are clamped, NaN is taken as 0. - Thread: any
    public var progress: Double {
        get { look.withLock { $0.progress } }
        set {
            let value = Self.clamped(newValue)
            let changed = look.withLock { l -> Bool in
                defer { l.progress = value }
                return l.progress != value
            }
            if changed { lookDidChange() }
        }
    }

    /// Whether the bar shows a sliding block (work of unknown length) instead of `progress`.
    /// - Thread: any
    public var isIndeterminate: Bool {
        get { look.withLock { $0.isIndeterminate } }
        set {
            let changed = look.withLock { l -> Bool in
                defer { l.isIndeterminate = newValue }
                return l.isIndeterminate != newValue
            }
            if changed { lookDidChange() }
        }
    }

    /// The fill moves (on the UI thread); the bar's size does not change, so no layout is measured
    /// again.
    private func lookDidChange() {
        runtime.noteAccessibilityChange()
        runtime.mainQueue.performOrEnqueue { [self] in layoutParts() }
    }

    // MARK: Animation (main thread)

    /// Whether the block is moving now: indeterminate, motion not reduced, in a host, visible, and
    /// neither the bar nor an ancestor hidden. - Thread: main
    @MainActor
    public var isAnimating: Bool {
        guard isIndeterminate, !reducesMotion, interfaceState.contains(.visible), nodeHost != nil else { return false }
        var node: Node? = self
        while let current = node {
            if current.isHidden || current.opacity <= 0 { return false }
            node = current.supernode
        }
        return true
    }

    private var reducesMotion: Bool {
        dependOnAppearance(.motion)
        return runtime.appearance.reducedMotion
    }

    /// The block's frame in a track of `bounds` at frame time `time`: it enters from the left, crosses
    /// in `period` seconds and leaves at the right, then starts again. - Thread: any
    public static func blockFrame(at time: Double, in bounds: Rect) -> Rect {
        let width = (bounds.width * blockFraction).rounded()
        var phase = time.isFinite ? (time / period).truncatingRemainder(dividingBy: 1) : 0
        if phase < 0 { phase += 1 }
        let x = -width + phase * (bounds.width + width)
        return Rect(x: x.rounded(), y: 0, width: width, height: bounds.height)
    }

    @MainActor
    open override func appearanceDidChange(_ change: AppearanceChange) {
        super.appearanceDidChange(change)
        if change.contains(.motion) { layoutParts() }
    }

    // MARK: Layout

    @MainActor
    open override func layout() {
        super.layout()
        layoutParts()
    }

    @MainActor
    private func layoutParts() {
        let bounds = self.bounds
        let radius = bounds.height / 2
        trackNode.frame = bounds
        trackNode.cornerRadius = radius
        let (progress, indeterminate) = look.withLock { ($0.progress, $0.isIndeterminate) }
        let still = indeterminate && reducesMotion
        stripesNode.isHidden = !still
        fillNode.isHidden = still
        if still {
            stripesNode.frame = bounds
        } else if indeterminate {
            fillNode.frame = Self.blockFrame(at: blockTime, in: bounds)
            fillNode.cornerRadius = radius
        } else {
            fillNode.frame = Rect(x: 0, y: 0, width: (bounds.width * progress).rounded(), height: bounds.height)
            fillNode.cornerRadius = radius
        }
    }
}

extension ProgressIndicatorNode: FrameParticipant {
    /// Moves the block to where it is at `time`, while it animates. - Thread: main
    public func frameWillStartDisplays(at time: Double) {
        guard isAnimating else { return }
        blockTime = time
        let frame = Self.blockFrame(at: time, in: trackNode.bounds)
        if fillNode.frame != frame { fillNode.frame = frame }
    }

    /// Nothing to add to the record. - Thread: main
    public func frameWillComposite(_ record: inout FrameRecord) {}

    /// False while the block moves (the host keeps running frames for it); true otherwise, so a
    /// hidden, removed or determinate bar asks for no frame. - Thread: main
    public var isSettled: Bool { !isAnimating }
}

/// The still stripes of an indeterminate bar under reduced motion: diagonal bands of the accent
/// colour over a paler accent, drawn once.
final class ProgressStripesNode: Node, NodeDrawing, @unchecked Sendable {
    struct DrawParameters: Sendable {
        var accent: Color
    }

    func drawParameters() -> DrawParameters { DrawParameters(accent: themeColor(.accent)) }

    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        let bounds = info.bounds
        context.fill(bounds, color: parameters.accent.withAlphaMultiplied(by: 0.35))
        // Bands 6 points wide every 12, leaning right: each row of pixels shifts by one.
        let rows = max(1, Int((bounds.height * info.scale).rounded()))
        let rowHeight = bounds.height / Double(rows)
        for row in 0..<rows {
            let y = Double(row) * rowHeight
            let shift = Double(rows - 1 - row) / info.scale
            var x = -12.0 + shift
            while x < bounds.width {
                context.fill(Rect(x: x, y: y, width: 6, height: rowHeight), color: parameters.accent)
                x += 12
            }
        }
    }
}
