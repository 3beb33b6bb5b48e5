import Compositor

/// A value that may be made on any thread but used only on the UI thread, checked on every access.
///
/// It carries UI-thread objects (a node to apply contents to, a layer to detach) through the
/// main queue and the display pipeline. Reading `value` off the UI thread is a precondition failure,
/// in release builds too, so the box cannot become a back door around the threading rules.
/// - Thread: `init` any; `value` UI thread only (checked).
struct UIThreadBound<Value>: @unchecked Sendable {
    private let stored: Value

    /// Hands `value` over to the UI thread; the caller must not use it afterwards off that thread.
    init(_ value: Value) { stored = value }

    /// The value. - Thread: main (checked)
    @MainActor
    var value: Value {
        UIThread.precondition("UIThreadBound.value")
        return stored
    }
}

/// A weak reference to a node.
struct WeakNode {
    weak var node: Node?
    init(_ node: Node) { self.node = node }
}
