/// A property of a layer that moves by itself over time, handed to the compositor as data.
///
/// The UI thread still sets the layer's property frame by frame (its model value); the compositor
/// draws the value of the animation at the time of the frame it presents instead. Both come from the
/// same function of time, so a frame drawn at the UI thread's frame time shows the model, and a frame
/// drawn while the UI thread is busy (a compositor on its own thread) shows where the motion has got
/// to: a fling, a fade or a slide goes on through an app's stall instead of freezing and jumping.
///
/// `value(at:)` is clamped to `start...end`: after its end an animation holds its last value until
/// the UI thread removes it.
/// - Thread: any (a value)
public struct LayerAnimation: Sendable {
    /// What the animation drives.
    public enum Property: Sendable, Hashable {
        /// `Layer.opacity`.
        case opacity
        /// The x of `Layer.frame`'s origin.
        case originX
        /// The y of `Layer.frame`'s origin.
        case originY
    }

    public let property: Property
    /// The time the motion starts, in the host's frame time (seconds).
    public let start: Double
    /// The time it reaches its last value (may be infinite: a motion that ends by itself, like a
    /// fling settling, holds its resting value from then on).
    public let end: Double
    private let function: @Sendable (Double) -> Double

    /// An animation of `property` whose value at each time in `start...end` is `value(time)`.
    public init(_ property: Property, start: Double, end: Double, value: @escaping @Sendable (Double) -> Double) {
        self.property = property
        self.start = start.isFinite ? start : 0
        self.end = end.isNaN ? self.start : max(self.start, end)
        self.function = value
    }

    /// The shape of a change from one value to another over time.
    public enum Curve: Sendable, Hashable {
        case linear
        /// 1 − (1 − t)²: the runtime's animator.
        case easeOutQuadratic
        /// 1 − (1 − t)³: a list's animated updates and scrolls.
        case easeOutCubic

        /// The curve at `progress` (clamped to 0...1). - Thread: any
        public func callAsFunction(_ progress: Double) -> Double {
            let p = progress.isNaN ? 1 : min(1, max(0, progress))
            switch self {
            case .linear: return p
            case .easeOutQuadratic: return 1 - (1 - p) * (1 - p)
            case .easeOutCubic: return 1 - (1 - p) * (1 - p) * (1 - p)
            }
        }
    }

    /// A change of `property` from `from` to `to` over `duration` seconds from `start`, along `curve`.
    public static func interpolating(_ property: Property, from: Double, to: Double, start: Double,
                                     duration: Double, curve: Curve) -> LayerAnimation {
        let duration = duration.isFinite && duration > 0 ? duration : 0
        return LayerAnimation(property, start: start, end: start + duration) { time in
            guard duration > 0 else { return to }
            return from + (to - from) * curve((time - start) / duration)
        }
    }

    /// The value at `time` (clamped to the animation's span); a NaN or infinite result counts as nil
    /// (the model value is drawn).
    public func value(at time: Double) -> Double? {
        guard time.isFinite else { return nil }
        let value = function(min(max(time, start), end))
        return value.isFinite ? value : nil
    }

    /// True while `time` is before the end: frames drawn then differ from one another.
    public func isRunning(at time: Double) -> Bool { time < end }
}

/// An immutable copy of a layer and its sublayers as the UI thread last committed them: what a
/// compositor draws, on the UI thread or on a thread of its own. Values only (`Bitmap` contents are
/// immutable), so a snapshot may be handed to any thread.
///
/// `Layer.snapshot()` makes one; an unchanged subtree is shared with the previous snapshot, so a
/// frame that changed one layer copies only the path from it to the root.
/// - Thread: any
public final class LayerSnapshot: Sendable {
    /// The layer's identity, unique for the process's life (not reused when the layer is gone).
    public let id: Int
    /// `Layer.version` when copied: equal ids and versions draw the same.
    public let version: Int
    public let name: String?
    /// `Layer.frame`, sanitized (finite, non-negative size).
    public let frame: Rect
    public let contents: Bitmap?
    public let backgroundColor: Color?
    /// `Layer.opacity` clamped to 0...1 (NaN: 0).
    public let opacity: Double
    public let isHidden: Bool
    public let clipsToBounds: Bool
    /// The radii in effect (`Layer.effectiveCornerRadii`).
    public let cornerRadii: CornerRadii
    public let cornerRoundingMode: CornerRoundingMode
    public let cornerClipColor: Color?
    /// Sublayers in drawing order.
    public let sublayers: [LayerSnapshot]
    /// Properties moving by themselves (`Layer.animations`).
    public let animations: [LayerAnimation]
    /// True when this layer or one below it has animations.
    public let hasAnimations: Bool
    /// How the wheel moves this layer on a compositor thread (`Layer.scrollBinding`).
    public let scrollBinding: ScrollBinding?
    /// True when this layer or one below it has a scroll binding.
    public let hasScrollBinding: Bool
    /// What the layer's node does with the pointer and the wheel (`Layer.inputRole`).
    public let inputRole: LayerInputRole

    init(id: Int, version: Int, name: String?, frame: Rect, contents: Bitmap?, backgroundColor: Color?,
         opacity: Double, isHidden: Bool, clipsToBounds: Bool, cornerRadii: CornerRadii,
         cornerRoundingMode: CornerRoundingMode, cornerClipColor: Color?, sublayers: [LayerSnapshot],
         animations: [LayerAnimation], scrollBinding: ScrollBinding?, inputRole: LayerInputRole = .none) {
        self.id = id
        self.version = version
        self.name = name
        self.frame = frame
        self.contents = contents
        self.backgroundColor = backgroundColor
        self.opacity = opacity
        self.isHidden = isHidden
        self.clipsToBounds = clipsToBounds
        self.cornerRadii = cornerRadii
        self.cornerRoundingMode = cornerRoundingMode
        self.cornerClipColor = cornerClipColor
        self.sublayers = sublayers
        self.animations = animations
        self.hasAnimations = !animations.isEmpty || sublayers.contains(where: \.hasAnimations)
        self.scrollBinding = scrollBinding
        self.hasScrollBinding = scrollBinding != nil || sublayers.contains(where: \.hasScrollBinding)
        self.inputRole = inputRole
    }

    /// A copy with another frame, sublayers or animations.
    private func copy(frame: Rect? = nil, sublayers: [LayerSnapshot]? = nil, animations: [LayerAnimation]? = nil) -> LayerSnapshot {
        LayerSnapshot(id: id, version: version, name: name, frame: frame ?? self.frame, contents: contents,
                      backgroundColor: backgroundColor, opacity: opacity, isHidden: isHidden,
                      clipsToBounds: clipsToBounds, cornerRadii: cornerRadii, cornerRoundingMode: cornerRoundingMode,
                      cornerClipColor: cornerClipColor, sublayers: sublayers ?? self.sublayers,
                      animations: animations ?? self.animations, scrollBinding: scrollBinding, inputRole: inputRole)
    }

    /// This layer with other sublayers.
    func with(sublayers: [LayerSnapshot]) -> LayerSnapshot {
        copy(sublayers: sublayers)
    }

    /// This layer moving along y (or x, `horizontally`) as `track` runs (the compositor thread drives
    /// its scroll): an animation of that coordinate from `time`, over the model's.
    func moving(along track: ScrollTrack, origin: Double, from time: Double, horizontally: Bool) -> LayerSnapshot {
        let property: LayerAnimation.Property = horizontally ? .originX : .originY
        var frame = self.frame
        let position = origin - track.offset(at: time)
        if horizontally { frame.origin.x = position } else { frame.origin.y = position }
        guard track.isMoving(at: time) else {
            return copy(frame: frame.sanitized, animations: animations.filter { $0.property != property })
        }
        return copy(frame: frame.sanitized, animations: animations.filter { $0.property != property }
                        + [track.contentAnimation(property, from: time, origin: origin)])
    }

    /// The opacity drawn at `time` (nil: the model's).
    public func presentedOpacity(at time: Double?) -> Double {
        guard let time, !animations.isEmpty else { return opacity }
        for animation in animations where animation.property == .opacity {
            if let value = animation.value(at: time) { return min(1, max(0, value)) }
        }
        return opacity
    }

    /// The frame drawn at `time` (nil: the model's): animations move its origin, never its size.
    public func presentedFrame(at time: Double?) -> Rect {
        guard let time, !animations.isEmpty else { return frame }
        var result = frame
        for animation in animations {
            switch animation.property {
            case .originX: if let x = animation.value(at: time) { result.origin.x = x }
            case .originY: if let y = animation.value(at: time) { result.origin.y = y }
            case .opacity: break
            }
        }
        return result.sanitized
    }

    /// True when a frame drawn at `time` may differ from one drawn later: an animation here or below
    /// has not reached its end.
    public func isAnimating(at time: Double) -> Bool {
        guard hasAnimations else { return false }
        if animations.contains(where: { $0.isRunning(at: time) }) { return true }
        return sublayers.contains { $0.isAnimating(at: time) }
    }

    /// The first layer found, depth first, that `matches`.
    public func first(where matches: (LayerSnapshot) -> Bool) -> LayerSnapshot? {
        if matches(self) { return self }
        for sublayer in sublayers { if let found = sublayer.first(where: matches) { return found } }
        return nil
    }

    /// The layer whose `Layer.serial` is `serial`, in this tree.
    public func layer(serial: Int) -> LayerSnapshot? { first { $0.id == serial } }
}

extension Layer {
    /// An immutable copy of this layer and its sublayers as they are now. Subtrees unchanged since
    /// the last snapshot are shared with it (each layer keeps its last copy until it or a layer
    /// below it changes), so taking one every frame costs the changed paths only. (main thread only)
    public func snapshot() -> LayerSnapshot {
        UIThread.precondition("Layer.snapshot")
        if let cached = cachedSnapshot, !snapshotIsStale { return cached }
        let made = LayerSnapshot(
            id: serial, version: version, name: name, frame: frame.sanitized, contents: contents,
            backgroundColor: backgroundColor, opacity: opacity.isNaN ? 0 : min(1, max(0, opacity)),
            isHidden: isHidden, clipsToBounds: clipsToBounds, cornerRadii: effectiveCornerRadii,
            cornerRoundingMode: cornerRoundingMode, cornerClipColor: cornerClipColor,
            sublayers: sublayersInDrawOrder.map { $0.snapshot() }, animations: animations,
            scrollBinding: scrollBinding, inputRole: inputRole)
        cachedSnapshot = made
        snapshotIsStale = false
        return made
    }
}
