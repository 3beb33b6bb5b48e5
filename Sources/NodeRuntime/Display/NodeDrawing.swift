public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// What a draw function gets besides its parameters: the size to draw, the scale, and a cancellation
/// check to call between phases of long work.
/// - Thread: display worker (or the calling thread for synchronous display)
public struct DrawInfo: Sendable {
    /// The node's bounds in points (origin zero).
    public let bounds: Rect
    /// Pixels per point.
    public let scale: Double
    /// True once the draw can no longer matter (the node left the display range, was removed,
    /// suspended or freed); stop and return as soon as convenient. A newer request for the same node
    /// does not cancel a draw: it waits as the one pending draw.
    public let isCancelled: @Sendable () -> Bool

    public init(bounds: Rect, scale: Double, isCancelled: @escaping @Sendable () -> Bool = { false }) {
        self.bounds = bounds; self.scale = scale; self.isCancelled = isCancelled
    }
}

/// A node that draws its own contents in the background.
///
/// The node captures everything its drawing needs in `drawParameters()` on the UI thread; a worker
/// then calls the `static` draw function with that value alone.
///
/// What is checked, and by whom:
/// - The compiler: `draw` is `static`, so it has no `self` to capture by accident, and
///   `DrawParameters` must be `Sendable`. Nodes are `Sendable` too (their state is under their lock),
///   so the compiler does not stop a node, or a wrapper holding one, from being put in the parameters.
/// - The runtime, always (release builds too): while a draw function runs, the thread is marked as
///   drawing, and every access to a node's guarded state from that thread (its frame, subnodes,
///   properties, an image node's source, a text node's text) is a precondition failure naming the
///   node's type and this rule.
///
/// Implement `draw(_:in:info:)` to draw into a context prepared at the node's size and scale, or
/// `display(_:info:)` to return a finished bitmap (the runtime still calls `draw` when it must bake the
/// background and precomposited corners around it).
public protocol NodeDrawing: Node {
    associatedtype DrawParameters: Sendable
    /// A snapshot of what the drawing needs. Everything the node's state held when its display was
    /// requested is visible here (the request is claimed before this is called).
    /// - Thread: main
    @MainActor
    func drawParameters() -> DrawParameters
    /// Draws into `context` (already sized, scaled, and clipped when corners are precomposited).
    /// - Thread: display worker
    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo)
    /// Returns the node's contents. The default makes a context and calls `draw`.
    /// - Thread: display worker
    static func display(_ parameters: DrawParameters, info: DrawInfo) -> Bitmap?
}

extension NodeDrawing {
    public static func display(_ parameters: DrawParameters, info: DrawInfo) -> Bitmap? {
        guard var context = try? BitmapContext(size: info.bounds.size, scale: info.scale) else { return nil }
        draw(parameters, in: &context, info: info)
        return info.isCancelled() ? nil : context.makeBitmap()
    }

    /// The node's draw as a `Sendable` closure over its parameters, captured now. (UI thread)
    @MainActor
    func makeDrawClosure(bake: BakedBackground?) -> @Sendable (DrawInfo) -> Bitmap? {
        let parameters = drawParameters()
        guard let bake else {
            return { info in Self.display(parameters, info: info) }
        }
        return { info in
            guard var context = try? BitmapContext(size: info.bounds.size, scale: info.scale) else { return nil }
            bake.prepare(&context)
            Self.draw(parameters, in: &context, info: info)
            return info.isCancelled() ? nil : context.makeBitmap()
        }
    }
}

extension NodeDrawing {
    /// The node's drawing as a closure that draws into a context it is given (a region of an
    /// ancestor's canvas, when the ancestor rasterizes its subtree), parameters captured now.
    /// - Thread: main (captures the parameters); the closure: display worker
    @MainActor
    func makeDrawIntoClosure() -> @Sendable (inout BitmapContext, DrawInfo) -> Void {
        let parameters = drawParameters()
        return { context, info in Self.draw(parameters, in: &context, info: info) }
    }
}

/// The background and corners a precomposited node bakes under its drawing.
struct BakedBackground: Sendable {
    var color: Color?
    var radii: CornerRadii

    func prepare(_ context: inout BitmapContext) {
        let bounds = context.bounds
        if !radii.isZero { context.clip(toRoundedRect: bounds, radii: radii) }
        if let color { context.fill(bounds, color: color) }
    }
}

/// The runtime half of "draws cannot reach nodes": the pipeline runs every draw function inside
/// `run`, and node state accessors call `check`, which traps while the calling thread is drawing.
/// - Thread: any (each thread has its own mark)
enum DrawScope {
    private static let depth = ThreadLocalCounter()

    /// Runs `draw` with the calling thread marked as drawing (nested draws of a rasterized subtree
    /// keep the mark until the outermost returns).
    @inline(__always)
    static func run<Result>(_ draw: () -> Result) -> Result {
        depth.value += 1
        defer { depth.value -= 1 }
        return draw()
    }

    /// True while the calling thread runs a draw function.
    static var isActive: Bool { depth.value != 0 }

    /// Traps when the calling thread is drawing: `node`'s state is out of a draw's reach.
    @inline(__always)
    static func check(_ node: AnyObject) {
        if depth.value != 0 { trap(node) }
    }

    private static func trap(_ node: AnyObject) -> Never {
        Contract.violated("Tessera: a draw function read or wrote node state (\(type(of: node))). "
                          + "Draw functions run on display workers from their Sendable draw parameters "
                          + "alone; capture what the drawing needs in drawParameters() instead")
    }
}
