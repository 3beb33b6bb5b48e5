public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// The directions a `ScrollNode` moves its content in.
/// - Thread: any (a value)
public struct ScrollAxes: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let vertical = ScrollAxes(rawValue: 1)
    public static let horizontal = ScrollAxes(rawValue: 2)
    public static let both: ScrollAxes = [.vertical, .horizontal]
}

/// A viewport onto one content node of any size: the content is measured like any layout, unbounded
/// along the scrolling axes and at the viewport's size across them, and moves under the wheel, a drag
/// (with rubber banding past the edges), a fling with the list's deceleration and bounce, and
/// `setContentOffset(_:animated:)`. Thin scroll indicators show where the viewport is while it moves.
///
/// Like a list, it hands its motion to the compositor as data (`LayerAnimation`), so a fling goes on
/// while the UI thread is busy, and the wheel moves it on a compositor thread at once
/// (`ScrollBinding`: along y, or x for a node that scrolls only horizontally; not while paging).
///
/// - Thread: made and configured on any thread (`axes`, `showsScrollIndicators`); scrolling and the
///   queries are UI-thread API.
open class ScrollNode: Node, @unchecked Sendable {
    // MARK: Accessibility

    /// A scroll area is an element holding its content's elements. - Thread: any
    open override var isAccessibilityElementByDefault: Bool { true }

    /// A scroll area that scrolls forward and backward by a screenful. - Thread: main
    open override func accessibilityDefaults() -> AccessibilityDescription {
        AccessibilityDescription(role: .scrollArea, actions: [.scrollForward, .scrollBackward])
    }

    /// Scrolls by a screenful along its axis (vertical where both scroll). - Thread: main
    open override func performAccessibilityAction(_ action: AccessibilityAction) -> Bool {
        let sign: Double
        switch action {
        case .scrollForward: sign = 1
        case .scrollBackward: sign = -1
        default: return super.performAccessibilityAction(action)
        }
        let offset = contentOffset
        let step = Point(x: axes == .horizontal ? sign * bounds.width * 0.9 : 0,
                         y: axes == .horizontal ? 0 : sign * bounds.height * 0.9)
        setContentOffset(Point(x: offset.x + step.x, y: offset.y + step.y), animated: true)
        return true
    }

    /// What scrolls. - Thread: any
    public let contentNode: Node

    private struct Settings {
        var axes: ScrollAxes = .vertical
        var showsScrollIndicators = true
        var isPagingEnabled = false
    }
    private let settings = Locked(Settings())

    /// The directions the content moves in (default vertical). - Thread: any
    public var axes: ScrollAxes {
        get { settings.withLock { $0.axes } }
        set {
            settings.withLock { $0.axes = newValue }
            setNeedsLayout()
        }
    }

    /// Whether thin bars show the viewport's place while the content moves (default true).
    /// - Thread: any
    public var showsScrollIndicators: Bool {
        get { settings.withLock { $0.showsScrollIndicators } }
        set { settings.withLock { $0.showsScrollIndicators = newValue } }
    }

    /// Pages: the content comes to rest only at whole multiples of the viewport's size (a pager: one
    /// item a page). A release moves to the next page in the direction of a quick flick, else to the
    /// nearest page; a wheel notch and the arrow keys move one page. - Thread: any
    public var isPagingEnabled: Bool {
        get { settings.withLock { $0.isPagingEnabled } }
        set { settings.withLock { $0.isPagingEnabled = newValue } }
    }

    /// Points per wheel step. (main thread only)
    @MainActor public var wheelStep = 48.0
    /// The deceleration, bounce and wheel tuning, shared with lists. (main thread only)
    @MainActor public var physics = ScrollPhysics()

    // Main-thread state.
    @MainActor private var offset = Point.zero {
        didSet { if offset != oldValue && !runsTrack { scrollHandoff &+= 1 } }
    }
    @MainActor private var motion = (x: ScrollMotion.idle, y: ScrollMotion.idle) {
        didSet { if (motion.x != oldValue.x || motion.y != oldValue.y) && !runsTrack { scrollHandoff &+= 1 } }
    }
    /// Wheel samples of each axis, for the wheel's velocity (see `ScrollTrack.applyWheel`).
    @MainActor private var wheelSamples: (x: [WheelSample], y: [WheelSample]) = ([], [])
    /// Counts the node's own changes of its position and motion (`ScrollBinding.handoff`).
    @MainActor private var scrollHandoff = 0
    /// True while the motion runs in time or is taken over from the compositor thread.
    @MainActor private var runsTrack = false
    @MainActor private var now = 0.0
    @MainActor private var measuredContentSize = Size.zero
    @MainActor private var lastMoved = -Double.infinity
    @MainActor private var indicators: (vertical: Layer, horizontal: Layer)?

    /// Seconds the indicators stay after the content stops.
    static let indicatorLinger = 0.6

    /// A scroll node showing `content`.
    public init(content: Node) {
        contentNode = content
        super.init()
        clipsToBounds = true
        addSubnode(content)
    }

    // MARK: Queries and scrolling (main thread)

    /// The viewport's top-left corner in the content. - Thread: main
    @MainActor
    public var contentOffset: Point {
        UIThread.precondition("ScrollNode.contentOffset")
        return offset
    }

    /// The content's measured size. - Thread: main
    @MainActor
    public var contentSize: Size {
        UIThread.precondition("ScrollNode.contentSize")
        return measuredContentSize
    }

    /// True while a drag, a fling, a bounce or an animated scroll moves the content. - Thread: main
    @MainActor
    public var isScrolling: Bool {
        UIThread.precondition("ScrollNode.isScrolling")
        return !(isIdle(motion.x) && isIdle(motion.y))
    }

    /// Scrolls so that the viewport's corner is at `point` (clamped to the content; a NaN or infinite
    /// coordinate leaves that axis alone, reported once in `diagnostics`). - Thread: main
    @MainActor
    public func setContentOffset(_ point: Point, animated: Bool) {
        UIThread.precondition("ScrollNode.setContentOffset")
        if !point.x.isFinite || !point.y.isFinite {
            reportOnce(.invalidParameter, property: "setContentOffset",
                       "setContentOffset(\(point)) has a coordinate that is not a number; that axis keeps its offset")
        }
        let target = Point(x: point.x.isFinite ? point.x : offset.x, y: point.y.isFinite ? point.y : offset.y)
        let (lower, upper) = offsetLimits()
        let clampedX = min(max(target.x, lower.x), upper.x), clampedY = min(max(target.y, lower.y), upper.y)
        if animated {
            motion.x = .animating(start: now, from: offset.x, to: clampedX, duration: physics.animationDuration)
            motion.y = .animating(start: now, from: offset.y, to: clampedY, duration: physics.animationDuration)
        } else {
            motion = (.idle, .idle)
            offset = Point(x: clampedX, y: clampedY)
            placeContent()
        }
    }

    /// Starts a fling at `velocity` points per second (positive: towards the end of each axis). A
    /// velocity that is not a number is ignored and reported once in `diagnostics`. - Thread: main
    @MainActor
    public func fling(velocity: Point) {
        UIThread.precondition("ScrollNode.fling(velocity:)")
        guard velocity.x.isFinite, velocity.y.isFinite else {
            reportOnce(.invalidParameter, property: "fling(velocity:)",
                       "fling(velocity: \(velocity)) is not a speed; ignored, the content keeps its motion")
            return
        }
        release(velocity: velocity, at: now)
    }

    /// A press stops moving content where it is (run to the press's time first).
    open override func touchesBegan(_ touch: Touch) {
        super.touchesBegan(touch)
        MainActor.assumeIsolated {
            if isScrolling && !isDragging(motion.y) {
                if touch.timestamp > now { advance(to: touch.timestamp) }
                motion = (.idle, .idle)
                placeContent()
            }
        }
    }

    // MARK: Layout

    open override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        if let preferredSize { return preferredSize }
        return Size(width: constrainedSize.width.isFinite ? constrainedSize.width : 0,
                    height: constrainedSize.height.isFinite ? constrainedSize.height : 0)
    }

    /// Measures the content for the viewport (unbounded along the scrolling axes) and places it.
    open override func layout() {
        super.layout()
        let size = bounds.size, axes = self.axes
        let minimum = Size(width: axes.contains(.horizontal) ? 0 : size.width, height: axes.contains(.vertical) ? 0 : size.height)
        let maximum = Size(width: axes.contains(.horizontal) ? .infinity : size.width,
                           height: axes.contains(.vertical) ? .infinity : size.height)
        let measured = contentNode.layoutThatFits(SizeRange(min: minimum, max: maximum)).size
        measuredContentSize = Size(width: measured.width.isFinite ? measured.width : size.width,
                                   height: measured.height.isFinite ? measured.height : size.height)
        if isIdle(motion.x) && isIdle(motion.y) {
            let (lower, upper) = offsetLimits()
            offset = Point(x: min(max(offset.x, lower.x), upper.x), y: min(max(offset.y, lower.y), upper.y))
        }
        placeContent()
    }

    open override func didLoad() {
        super.didLoad()
        let pan = PanGestureRecognizer { [weak self] recognizer in
            guard let self, let pan = recognizer as? PanGestureRecognizer else { return }
            self.handlePan(pan)
        }
        addGestureRecognizer(pan)
        let vertical = Layer(name: "scroll-indicator-vertical"), horizontal = Layer(name: "scroll-indicator-horizontal")
        for bar in [vertical, horizontal] {
            bar.backgroundColor = Color(red: 120, green: 120, blue: 120, alpha: 170)
            bar.cornerRadius = 1.5
            bar.zPosition = 1_000
            bar.opacity = 0
            layer.addSublayer(bar)
        }
        indicators = (vertical, horizontal)
    }

    // MARK: Motion

    private func isIdle(_ motion: ScrollMotion) -> Bool {
        if case .idle = motion { return true }
        return false
    }

    private func isDragging(_ motion: ScrollMotion) -> Bool {
        if case .dragging = motion { return true }
        return false
    }

    /// The smallest and largest offsets at rest for the content measured now.
    @MainActor
    private func offsetLimits() -> (lower: Point, upper: Point) {
        let size = bounds.size, axes = self.axes
        let upperX = axes.contains(.horizontal) ? max(0, measuredContentSize.width - size.width) : 0
        let upperY = axes.contains(.vertical) ? max(0, measuredContentSize.height - size.height) : 0
        return (.zero, Point(x: upperX, y: upperY))
    }

    /// `physics` as the appearance has it: with `reducesMotion` under `Appearance.reducedMotion`.
    @MainActor
    var effectivePhysics: ScrollPhysics {
        var physics = self.physics
        if runtime.appearance.reducedMotion { physics.reducesMotion = true }
        return physics
    }

    @MainActor
    private func tracks() -> (x: ScrollTrack, y: ScrollTrack) {
        let (lower, upper) = offsetLimits()
        let physics = effectivePhysics
        return (ScrollTrack(motion: motion.x, offset: offset.x, time: now, physics: physics, lower: lower.x, upper: upper.x,
                            wheelSamples: wheelSamples.x),
                ScrollTrack(motion: motion.y, offset: offset.y, time: now, physics: physics, lower: lower.y, upper: upper.y,
                            wheelSamples: wheelSamples.y))
    }

    /// Takes the tracks' positions and motions as the node's own without counting it as a change of
    /// its own (the motion ran in time, or the compositor thread moved it).
    @MainActor
    private func adopt(x: ScrollTrack, y: ScrollTrack) {
        runsTrack = true
        defer { runsTrack = false }
        motion = (x.motion, y.motion)
        offset = Point(x: x.offset, y: y.offset)
        wheelSamples = (x.wheelSamples, y.wheelSamples)
    }

    @MainActor
    private func advance(to time: Double) {
        var (x, y) = tracks()
        x.advance(to: time)
        y.advance(to: time)
        if x.offset != offset.x || y.offset != offset.y { lastMoved = time }
        adopt(x: x, y: y)
    }

    /// The axis the compositor thread may move (`ScrollBinding`): y, or x for a node that scrolls
    /// only horizontally; none while paging.
    @MainActor
    private var boundAxisIsHorizontal: Bool? {
        guard !isPagingEnabled, isUserInteractionEnabled else { return nil }
        if axes == .horizontal { return true }
        return axes.contains(.vertical) ? false : nil
    }

    /// Takes over the motion the compositor thread gave the bound axis for an event it applied itself
    /// (the wheel while the UI thread was busy). False when the update is not for this node's content
    /// or the node changed its motion since. - Thread: main
    @MainActor
    func takeOver(_ update: ScrollUpdate) -> Bool {
        guard let content = contentNode.layerIfLoaded, update.layer == content.serial, update.handoff == scrollHandoff,
              let horizontal = boundAxisIsHorizontal else { return false }
        var (x, y) = tracks()
        if horizontal { x = update.track } else { y = update.track }
        adopt(x: x, y: y)
        lastMoved = max(lastMoved, update.track.time)
        placeContent()
        return true
    }

    @MainActor
    private func release(velocity: Point, at time: Double) {
        if isPagingEnabled {
            snapToPage(velocity: velocity, at: time)
            return
        }
        let (lower, upper) = offsetLimits()
        func start(_ position: Double, _ speed: Double, _ low: Double, _ high: Double, axis: ScrollAxes) -> ScrollMotion {
            guard axes.contains(axis) else { return .idle }
            return ScrollTrack.motionAfterRelease(at: position, velocity: speed, lower: low, upper: high,
                                                      physics: effectivePhysics, time: time)
        }
        motion = (start(offset.x, velocity.x, lower.x, upper.x, axis: .horizontal),
                  start(offset.y, velocity.y, lower.y, upper.y, axis: .vertical))
    }

    /// Scrolls the least that shows `node` (a node inside the content) whole, with a margin of 8 points
    /// where there is room; nothing when it shows already or is not inside. - Thread: main
    @MainActor
    public func scrollToVisible(_ node: Node, animated: Bool) {
        UIThread.precondition("ScrollNode.scrollToVisible")
        var rect = node.frame
        var parent = node.supernode
        while let current = parent, current !== contentNode {
            rect = rect.offsetBy(dx: current.frame.minX, dy: current.frame.minY)
            parent = current.supernode
        }
        guard parent === contentNode || node === contentNode else { return }
        if node === contentNode { rect = Rect(origin: .zero, size: rect.size) }
        let margin = 8.0, size = bounds.size
        func reveal(_ minimum: Double, _ maximum: Double, _ current: Double, _ length: Double) -> Double {
            if maximum - minimum + 2 * margin > length || minimum - margin < current { return minimum - margin }
            if maximum + margin > current + length { return maximum + margin - length }
            return current
        }
        let target = Point(x: axes.contains(.horizontal) ? reveal(rect.minX, rect.maxX, offset.x, size.width) : offset.x,
                           y: axes.contains(.vertical) ? reveal(rect.minY, rect.maxY, offset.y, size.height) : offset.y)
        let (lower, upper) = offsetLimits()
        let clamped = Point(x: min(max(target.x, lower.x), upper.x), y: min(max(target.y, lower.y), upper.y))
        guard clamped != offset else { return }
        setContentOffset(clamped, animated: animated)
        lastMoved = now
    }

    /// The page the offset is on (rounded), along the paging axis: horizontal when the node scrolls
    /// that way, vertical otherwise.
    @MainActor
    public var currentPage: Int {
        UIThread.precondition("ScrollNode.currentPage")
        let (page, position) = pageGeometry()
        return page > 0 ? Int((position / page).rounded()) : 0
    }

    /// The number of pages the content makes along the paging axis. - Thread: main
    @MainActor
    public var pageCount: Int {
        UIThread.precondition("ScrollNode.pageCount")
        let (page, _) = pageGeometry()
        let length = axes.contains(.horizontal) ? measuredContentSize.width : measuredContentSize.height
        return page > 0 ? max(1, Int((length / page).rounded(.up))) : 1
    }

    /// Scrolls to `page` (clamped to the pages there are). - Thread: main
    @MainActor
    public func scrollToPage(_ page: Int, animated: Bool) {
        UIThread.precondition("ScrollNode.scrollToPage")
        let (size, _) = pageGeometry()
        let target = Double(min(max(0, page), pageCount - 1)) * size
        let point = axes.contains(.horizontal) ? Point(x: target, y: offset.y) : Point(x: offset.x, y: target)
        setContentOffset(point, animated: animated)
    }

    /// The page's size and the offset, along the paging axis.
    @MainActor
    private func pageGeometry() -> (page: Double, position: Double) {
        axes.contains(.horizontal) ? (bounds.width, offset.x) : (bounds.height, offset.y)
    }

    /// Moves to a page after a release: the next one in a quick flick's direction from the page the
    /// content was on, else the nearest.
    @MainActor
    private func snapToPage(velocity: Point, at time: Double) {
        let (size, position) = pageGeometry()
        guard size > 0 else { return }
        let speed = axes.contains(.horizontal) ? velocity.x : velocity.y
        let from = (position / size).rounded(.down)
        var page = (position / size).rounded()
        if abs(speed) >= Self.pageFlickVelocity { page = speed > 0 ? from + 1 : from }
        let target = min(max(0, page), Double(pageCount - 1)) * size
        let (lower, upper) = offsetLimits()
        func animate(_ from: Double, _ to: Double) -> ScrollMotion {
            from == to ? .idle : .animating(start: time, from: from, to: to, duration: physics.animationDuration)
        }
        if axes.contains(.horizontal) {
            motion = (animate(offset.x, min(max(target, lower.x), upper.x)), .idle)
        } else {
            motion = (.idle, animate(offset.y, min(max(target, lower.y), upper.y)))
        }
    }

    /// A release faster than this (points per second) turns the page.
    static let pageFlickVelocity = 300.0

    /// Moves with the keys: ←/→ and ↑/↓ by a page when paging (by `wheelStep` otherwise), Page Up/Down
    /// by a page, Home/End to the ends. Returns true when the key moved it (a controller passes its
    /// keys here). - Thread: main
    @MainActor
    public func handleKey(_ key: Key, modifiers: KeyModifiers = []) -> Bool {
        UIThread.precondition("ScrollNode.handleKey")
        guard isNodeLoaded else { return false }
        let horizontal = axes.contains(.horizontal), vertical = axes.contains(.vertical)
        let (size, _) = pageGeometry()
        let step = isPagingEnabled ? size : wheelStep
        var target = offset
        switch key {
        case .left where horizontal: target.x -= step
        case .right where horizontal: target.x += step
        case .up where vertical: target.y -= step
        case .down where vertical: target.y += step
        case .pageUp: if vertical { target.y -= bounds.height } else { target.x -= bounds.width }
        case .pageDown: if vertical { target.y += bounds.height } else { target.x += bounds.width }
        case .home: target = .zero
        case .end: target = Point(x: .greatestFiniteMagnitude, y: .greatestFiniteMagnitude)
        default: return false
        }
        if isPagingEnabled, size > 0, key != .end {
            let position = horizontal ? target.x : target.y
            let snapped = (position / size).rounded() * size
            if horizontal { target.x = snapped } else { target.y = snapped }
        }
        let (lower, upper) = offsetLimits()
        let clamped = Point(x: min(max(target.x, lower.x), upper.x), y: min(max(target.y, lower.y), upper.y))
        guard clamped != offset else { return false }
        setContentOffset(clamped, animated: true)
        lastMoved = now
        return true
    }

    @MainActor
    private func handlePan(_ pan: PanGestureRecognizer) {
        let time = pan.lastTouch?.timestamp ?? now
        let (lower, upper) = offsetLimits()
        let translation = pan.translation(in: nil)
        let size = bounds.size
        switch pan.state {
        case .began:
            let rawX = physics.unbanded(offset.x, lower: lower.x, upper: upper.x, dimension: size.width)
            let rawY = physics.unbanded(offset.y, lower: lower.y, upper: upper.y, dimension: size.height)
            motion = (.dragging(origin: rawX + translation.x), .dragging(origin: rawY + translation.y))
        case .changed:
            guard case .dragging(let originX) = motion.x, case .dragging(let originY) = motion.y else { return }
            let x = axes.contains(.horizontal)
                ? physics.rubberBanded(originX - translation.x, lower: lower.x, upper: upper.x, dimension: size.width) : offset.x
            let y = axes.contains(.vertical)
                ? physics.rubberBanded(originY - translation.y, lower: lower.y, upper: upper.y, dimension: size.height) : offset.y
            offset = Point(x: x, y: y)
            lastMoved = time
            placeContent()
        case .ended:
            guard isDragging(motion.x) || isDragging(motion.y) else { return }
            release(velocity: Point(x: -pan.velocity.x, y: -pan.velocity.y), at: time)
        case .cancelled, .failed:
            guard isDragging(motion.x) || isDragging(motion.y) else { return }
            release(velocity: .zero, at: time)
        case .possible, .recognized:
            break
        }
    }

    /// Puts the content at the offset, hands its motion to the compositor, and shows the indicators.
    @MainActor
    private func placeContent() {
        guard isNodeLoaded else { return }
        let origin = Point(x: -offset.x, y: -offset.y)
        if contentNode.frame.origin != origin || contentNode.frame.size != measuredContentSize {
            contentNode.frame = Rect(origin: origin, size: measuredContentSize)
        }
        if let content = contentNode.layerIfLoaded {
            var animations: [LayerAnimation] = []
            let movingX = !isIdle(motion.x) && !isDragging(motion.x), movingY = !isIdle(motion.y) && !isDragging(motion.y)
            if movingX || movingY {
                let (x, y) = tracks()
                if movingX { animations.append(x.contentAnimation(LayerAnimation.Property.originX, from: now)) }
                if movingY { animations.append(y.contentAnimation(LayerAnimation.Property.originY, from: now)) }
            }
            if !(animations.isEmpty && content.animations.isEmpty) { content.animations = animations }
            let (lower, upper) = offsetLimits()
            // The wheel on a compositor thread: along the one axis (y where both scroll); none for
            // pages, which the wheel turns whole, animated.
            // Its motion goes with it; at an edge the wheel passes on outwards, as it does here.
            var binding: ScrollBinding?
            if let horizontal = boundAxisIsHorizontal {
                let (x, y) = tracks()
                let (low, high) = horizontal ? (lower.x, upper.x) : (lower.y, upper.y)
                if high > low {
                    binding = ScrollBinding(viewport: layer.frameInRoot, lower: low, upper: high, wheelStep: wheelStep,
                                            isHorizontal: horizontal, track: horizontal ? x : y, handoff: scrollHandoff,
                                            passesWheelAtEdges: true, otherAxisOnUIThread: axes == .both)
                }
            }
            if content.scrollBinding != binding { content.scrollBinding = binding }
        }
        updateIndicators()
    }

    @MainActor
    private func updateIndicators() {
        guard let indicators else { return }
        let size = bounds.size
        let shown = showsScrollIndicators && (isScrolling || now - lastMoved < Self.indicatorLinger)
        let thickness = 3.0, inset = 2.0
        let content = measuredContentSize
        let vertical = axes.contains(.vertical) && content.height > size.height && size.height > 0
        let horizontal = axes.contains(.horizontal) && content.width > size.width && size.width > 0
        if vertical {
            let length = max(20, size.height * size.height / content.height)
            let travel = max(0, size.height - length - 2 * inset)
            let progress = min(1, max(0, offset.y / max(1, content.height - size.height)))
            indicators.vertical.frame = Rect(x: size.width - thickness - inset, y: inset + travel * progress,
                                             width: thickness, height: length)
        }
        if horizontal {
            let length = max(20, size.width * size.width / content.width)
            let travel = max(0, size.width - length - 2 * inset)
            let progress = min(1, max(0, offset.x / max(1, content.width - size.width)))
            indicators.horizontal.frame = Rect(x: inset + travel * progress, y: size.height - thickness - inset,
                                               width: length, height: thickness)
        }
        indicators.vertical.opacity = shown && vertical ? 1 : 0
        indicators.horizontal.opacity = shown && horizontal ? 1 : 0
    }
}

extension ScrollNode: FrameParticipant, WheelScrollable, TouchIntercepting {
    /// Moves the content to `time`. The host calls it once a frame. - Thread: main
    @MainActor
    public func frameWillStartDisplays(at time: Double) {
        UIThread.precondition("ScrollNode.frameWillStartDisplays")
        if time.isFinite { now = max(now, time) }
        guard isNodeLoaded else { return }
        if interfaceState.contains(.visible) {
            // On screen with no length along an axis it scrolls, while its content has some: it
            // shows nothing, and says why once.
            let size = bounds.size, content = measuredContentSize
            let vertical = axes.contains(.vertical) && size.height <= 0 && content.height > 0 && size.width > 0
            let horizontal = axes.contains(.horizontal) && size.width <= 0 && content.width > 0 && size.height > 0
            if vertical || horizontal {
                reportOnce(.showsNothing, property: "scroll extent",
                           "it is on screen but 0 pt \(vertical ? "tall" : "wide"), so the scroll node shows none of its content: a scrolling node has no length of its own along its axis; give it one (a size), or flexGrow(1) on it or on the wrapper that holds it in a stack")
            }
        }
        if !(isIdle(motion.x) && isIdle(motion.y)) && !isDragging(motion.y) { advance(to: now) }
        placeContent()
    }

    /// - Thread: main
    @MainActor
    public func frameWillComposite(_ record: inout FrameRecord) {}

    /// False while the content moves or the indicators still show. - Thread: main
    @MainActor
    public var isSettled: Bool {
        !isScrolling && !(showsScrollIndicators && now - lastMoved < Self.indicatorLinger)
    }

    /// The wheel moves the vertical axis (the horizontal one where only that scrolls); `dx` moves
    /// the horizontal axis. - Thread: main
    @MainActor
    public func scrollWheel(dx: Double, dy: Double) -> Bool {
        scrollWheel(dx: dx, dy: dy, at: now)
    }

    /// - Thread: main
    @MainActor
    public func scrollWheel(dx: Double, dy: Double, at time: Double) -> Bool {
        UIThread.precondition("ScrollNode.scrollWheel")
        guard dx.isFinite, dy.isFinite, dx != 0 || dy != 0, !isDragging(motion.y) else { return false }
        if time.isFinite, time > now, isScrolling { advance(to: time) }
        if isPagingEnabled {
            // A notch turns a page (from the page it is going to, when it is moving to one).
            let turn = axes.contains(.horizontal) ? (dx != 0 ? dx : -dy) : -dy
            var page = currentPage
            if case let .animating(_, _, target, _) = (axes.contains(.horizontal) ? motion.x : motion.y) {
                let (size, _) = pageGeometry()
                if size > 0 { page = Int((target / size).rounded()) }
            }
            let next = min(max(0, page + (turn > 0 ? 1 : -1)), pageCount - 1)
            guard next != page else { return false }
            scrollToPage(next, animated: true)
            lastMoved = time.isFinite ? time : now
            return true
        }
        // The one wheel function every scroll shares, along each axis the node scrolls: y by the
        // vertical motion; x by the horizontal one (or the vertical one where only x scrolls).
        var (x, y) = tracks()
        let at = time.isFinite ? time : now
        var moved = false
        if axes.contains(.vertical), dy != 0 {
            moved = y.applyWheel(steps: dy, stepLength: wheelStep, at: at) != 0 || moved
        }
        if axes.contains(.horizontal), let steps = axes == .horizontal ? ScrollTrack.wheelSteps(dx: dx, dy: dy, horizontal: true)
                                                                        : (dx != 0 ? -dx : nil) {
            moved = x.applyWheel(steps: steps, stepLength: wheelStep, at: at) != 0 || moved
        }
        // At an edge the wheel passes on outwards.
        guard moved else { return false }
        adopt(x: x, y: y)
        scrollHandoff &+= 1
        lastMoved = at
        placeContent()
        return true
    }

    /// A touch on moving content stops it rather than reaching what it shows.
    @MainActor
    func interceptsTouch(startingOn node: Node) -> Bool {
        !(isIdle(motion.x) && isIdle(motion.y)) && !isDragging(motion.y)
    }
}
