import Compositor
import Foundation
import Synchronization
@testable import NodeRuntime

/// A gate a draw function can wait on, opened by the test: makes "a draw in progress" deterministic.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let entered = DispatchSemaphore(value: 0)
    private let opened = Atomic<Bool>(false)

    /// Called by the draw: reports that it is running, then waits until the test opens the gate.
    func pass() {
        entered.signal()
        semaphore.wait()
        semaphore.signal()  // let any later passer through too
    }

    /// Waits until a draw is blocked at the gate.
    func waitUntilEntered() { entered.wait() }

    func open() {
        if !opened.exchange(true, ordering: .relaxed) { semaphore.signal() }
    }
}

/// Records what happened, in order, with whether it ran on the UI thread.
final class EventLog: Sendable {
    private let entries = Mutex<[(String, Bool)]>([])
    func record(_ name: String) { entries.withLock { $0.append((name, UIThread.isCurrent)) } }
    var names: [String] { entries.withLock { $0.map(\.0) } }
    var all: [(String, Bool)] { entries.withLock { $0 } }
}

/// A node that fills itself with a colour, optionally waiting at a gate first and reporting when done.
final class ColorNode: Node, NodeDrawing, @unchecked Sendable {
    struct DrawParameters: Sendable {
        var color: Color
        var gate: Gate?
        var drawn: DispatchSemaphore?
        var drawCount: DrawCounter?
    }
    /// Guarded by the node's own rules: set before display starts, read on the UI thread.
    private let parameters: Locked<DrawParameters>

    init(_ color: Color, gate: Gate? = nil, drawn: DispatchSemaphore? = nil, counter: DrawCounter? = nil) {
        parameters = Locked(DrawParameters(color: color, gate: gate, drawn: drawn, drawCount: counter))
        super.init()
    }

    var color: Color {
        get { parameters.withLock { $0.color } }
        set { parameters.withLock { $0.color = newValue }; setNeedsDisplay() }
    }
    var gate: Gate? {
        get { parameters.withLock { $0.gate } }
        set { parameters.withLock { $0.gate = newValue } }
    }
    var drawn: DispatchSemaphore? {
        get { parameters.withLock { $0.drawn } }
        set { parameters.withLock { $0.drawn = newValue } }
    }

    func drawParameters() -> DrawParameters { parameters.withLock { $0 } }

    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        parameters.gate?.pass()
        parameters.drawCount?.increment()
        if !info.isCancelled() { context.fill(info.bounds, color: parameters.color) }
        parameters.drawn?.signal()
    }
}

/// Counts draws across threads.
final class DrawCounter: Sendable {
    private let value = Atomic<Int>(0)
    func increment() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

/// The colour of a layer's contents at its centre, if it has contents.
@MainActor
func centreColor(_ layer: Layer) -> Color? {
    guard let bitmap = layer.contents, !bitmap.isEmpty else { return nil }
    return Color(premultipliedARGB: bitmap.pixel(x: bitmap.width / 2, y: bitmap.height / 2))
}

/// Runs `body` on a new thread, waits for it and returns its result.
@discardableResult
func onBackgroundThread<T>(_ body: @escaping @Sendable () -> T) -> T {
    let result = Locked<T?>(nil)
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        let value = body()
        result.withLock { $0 = value }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}

/// Makes a host over a recording backend.
@MainActor
func makeHost(width: Int = 400, height: Int = 300) -> (NodeHost, RecordingRenderBackend) {
    let backend = RecordingRenderBackend(width: width, height: height)
    let compositor = Compositor(backend: backend)
    return (NodeHost(compositor: compositor), backend)
}

/// Holds every worker of the shared scheduler at a gate, so work scheduled next waits in the queue
/// until the returned gates are opened.
func occupyAllWorkers() -> [Gate] {
    let scheduler = Runtime.shared.scheduler
    // Every worker must be free to take a gate (an app's policy may cap the active workers).
    scheduler.workerPolicy = .default
    let gates = (0..<scheduler.workerCount).map { _ in Gate() }
    for gate in gates {
        scheduler.schedule(priority: .visible) { _ in gate.pass(); return .completed }
        gate.waitUntilEntered()
    }
    return gates
}

/// A node that records its label when it draws (on the drawing thread) and fills itself white.
final class LabelNode: Node, NodeDrawing, @unchecked Sendable {
    let label: String
    let log: EventLog
    init(_ label: String, log: EventLog) { self.label = label; self.log = log; super.init() }
    func drawParameters() -> (String, EventLog) { (label, log) }
    static func draw(_ parameters: (String, EventLog), in context: inout BitmapContext, info: DrawInfo) {
        parameters.1.record(parameters.0)
        context.fill(info.bounds, color: .white)
    }
}
