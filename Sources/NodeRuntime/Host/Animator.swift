public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// Short layer animations driven by the frame loop: the placeholder fade and navigation slides.
/// The host advances it once a frame with the frame's time; nothing runs between frames.
/// - Thread: main, every member (checked).
@MainActor
public final class Animator: @unchecked Sendable {
    /// What an animation changes.
    public enum Property {
        case opacity(from: Double, to: Double)
        case origin(from: Point, to: Point)
    }

    private struct Running {
        let layer: Layer
        let property: Property
        let start: Double
        let duration: Double
        let completion: (() -> Void)?
    }

    private var running: [Running] = []  // main thread only
    /// True while the appearance asks for reduced motion (`Appearance.reducedMotion`, kept in step by
    /// `Runtime.setAppearance`): a slide (`.origin`) ends where it goes at once, its completion run at
    /// once; fades still run, as they do not move anything across the screen. (main thread only)
    public var reducesMotion = false
    /// The time of the current frame, in seconds. (main thread only)
    public private(set) var now: Double = 0

    nonisolated init() {}

    /// Number of running animations.
    public var count: Int {
        UIThread.precondition("Animator.count")
        return running.count
    }

    /// Animates `property` of `layer` from now over `duration` seconds (ease-out); the layer takes the
    /// first value at once. A zero or invalid duration applies the end value at once. An animation of
    /// the same property of the same layer still running is replaced (its completion runs now): the
    /// newest animation decides where the layer ends.
    public func animate(_ layer: Layer, _ property: Property, duration: Double, completion: (() -> Void)? = nil) {
        UIThread.precondition("Animator.animate")
        let superseded = removeRunning(layer, property)
        defer { for animation in superseded { animation.completion?() } }
        var slides = false
        if case .origin = property { slides = true }
        guard duration.isFinite, duration > 0, !(slides && reducesMotion) else {
            Self.apply(property, progress: 1, to: layer)
            completion?()
            return
        }
        Self.apply(property, progress: 0, to: layer)
        running.append(Running(layer: layer, property: property, start: now, duration: duration, completion: completion))
        // Handed to the compositor too, which draws the same curve at its own frames' times.
        let handed = Self.layerAnimations(property, start: now, duration: duration)
        let replaced = Set(handed.map(\.property))
        layer.animations = layer.animations.filter { !replaced.contains($0.property) } + handed
    }

    /// Ends a running animation of `property`'s kind on `layer` where `property` ends (its `to`), at
    /// once, and takes its curve back from the compositor; the ended animation's completion runs.
    public func stop(_ layer: Layer, _ property: Property) {
        UIThread.precondition("Animator.stop")
        let stopped = removeRunning(layer, property)
        guard !stopped.isEmpty else { return }
        let kinds = Set(Self.layerAnimations(property, start: 0, duration: 0).map(\.property))
        layer.animations = layer.animations.filter { !kinds.contains($0.property) }
        Self.apply(property, progress: 1, to: layer)
        for animation in stopped { animation.completion?() }
    }

    /// Takes out the running animations of `property`'s kind on `layer`.
    private func removeRunning(_ layer: Layer, _ property: Property) -> [Running] {
        var removed: [Running] = []
        running.removeAll { animation in
            guard animation.layer === layer, animation.property.isSameKind(as: property) else { return false }
            removed.append(animation)
            return true
        }
        return removed
    }

    /// The animation as data for the compositor: the curve `apply` steps.
    private static func layerAnimations(_ property: Property, start: Double, duration: Double) -> [LayerAnimation] {
        switch property {
        case let .opacity(from, to):
            return [.interpolating(.opacity, from: from, to: to, start: start, duration: duration, curve: .easeOutQuadratic)]
        case let .origin(from, to):
            return [.interpolating(.originX, from: from.x, to: to.x, start: start, duration: duration, curve: .easeOutQuadratic),
                    .interpolating(.originY, from: from.y, to: to.y, start: start, duration: duration, curve: .easeOutQuadratic)]
        }
    }

    /// Lays a layer of `color` over `layer`'s contents (under its sublayers) and fades it out.
    func fadeOutOverlay(on layer: Layer, color: Color, duration: Double) {
        fadeOutOverlay(named: "placeholder-fade", on: layer, duration: duration) { $0.backgroundColor = color }
    }

    /// Lays the old `contents` over `layer` (under its sublayers) and fades them out: a cross-fade.
    func fadeOutOverlay(on layer: Layer, contents: Bitmap, duration: Double) {
        fadeOutOverlay(named: "contents-fade", on: layer, duration: duration) { overlay in
            overlay.contents = contents
            overlay.cornerRoundingMode = layer.cornerRoundingMode
            overlay.cornerClipColor = layer.cornerClipColor
        }
    }

    /// Lays a sublayer shaped like `layer` (frame, corners) at the bottom of its sublayers, lets
    /// `configure` give it what it shows, fades it out and removes it.
    private func fadeOutOverlay(named name: String, on layer: Layer, duration: Double, configure: (Layer) -> Void) {
        let overlay = Layer(name: name)
        overlay.frame = layer.bounds
        overlay.cornerRadius = layer.cornerRadius
        overlay.maskedCorners = layer.maskedCorners
        configure(overlay)
        layer.insertSublayer(overlay, at: 0)
        animate(overlay, .opacity(from: 1, to: 0), duration: duration) { overlay.removeFromSuperlayer() }
    }

    /// Moves every animation to `time` and finishes those that are done. Returns how many are left.
    @discardableResult
    public func advance(to time: Double) -> Int {
        UIThread.precondition("Animator.advance")
        if time.isFinite { now = time }
        guard !running.isEmpty else { return 0 }
        var finished: [Running] = []
        running.removeAll { animation in
            let progress = min(1, max(0, (now - animation.start) / animation.duration))
            Self.apply(animation.property, progress: progress, to: animation.layer)
            if progress >= 1 { finished.append(animation); return true }
            return false
        }
        for animation in finished {
            // The model now holds the last value; the compositor's copy of the curve goes.
            let end = animation.start + animation.duration
            let handed = animation.layer.animations
            let kept = handed.filter { !($0.start == animation.start && $0.end == end) }
            if kept.count != handed.count { animation.layer.animations = kept }
        }
        for animation in finished { animation.completion?() }
        return running.count
    }

    private static func apply(_ property: Property, progress: Double, to layer: Layer) {
        let t = 1 - (1 - progress) * (1 - progress)  // ease-out
        switch property {
        case let .opacity(from, to):
            layer.opacity = from + (to - from) * t
        case let .origin(from, to):
            layer.frame.origin = Point(x: from.x + (to.x - from.x) * t, y: from.y + (to.y - from.y) * t)
        }
    }
}

extension Animator.Property {
    /// True for two values of the same property (opacity, or the origin).
    func isSameKind(as other: Animator.Property) -> Bool {
        switch (self, other) {
        case (.opacity, .opacity), (.origin, .origin): return true
        default: return false
        }
    }
}
