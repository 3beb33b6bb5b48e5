import Synchronization

/// The node's display sentinel: a counter that changes whenever drawn contents would be out of date.
/// A draw captures its value when it is queued and checks it before it starts, between phases and at
/// commit; a result whose value no longer matches is dropped, never shown.
/// - Thread: any
public final class DisplaySentinel: Sendable {
    private let counter = Atomic<UInt64>(0)
    public init() {}
    /// The current value.
    public var value: UInt64 { counter.load(ordering: .acquiring) }
    /// Invalidates every draw captured before now.
    @discardableResult
    public func bump() -> UInt64 { counter.add(1, ordering: .acquiringAndReleasing).newValue }
}
