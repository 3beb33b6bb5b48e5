public import Compositor
import Foundation
public import NodeRuntime

/// Connects a `NodeHost` to an `AtspiBridge`: after each frame the host ran, it publishes a new
/// accessibility tree when something a screen reader reads may have changed, and it answers the
/// bridge's requests on the UI thread. `Application` makes one for its window unless accessibility
/// is turned off.
///
/// A tree is built only while the bridge is connected, and only after a frame that had input,
/// applied commits, ran main-queue work, moved the focus or followed a change of what screen readers
/// read (a label or value set on a node, which need not show), or, once the app comes to rest, after
/// frames that moved layers (a scroll or an animation that ended): an app at rest builds none.
/// - Thread: main
@MainActor
public final class AtspiPublisher {
    /// The bridge this publisher feeds.
    public let bridge: AtspiBridge
    private weak var host: NodeHost?
    /// The window's title: the name of the tree's window element.
    public var title: String
    /// The focused node at the last tree, to see the focus move.
    private var publishedFocus: ObjectIdentifier?
    /// `Layer.changeCount` at the last tree.
    private var publishedLayerChanges = -1
    /// `Runtime.accessibilityChangeCount` at the last tree: a label or value set since, which need not
    /// show, makes a new one.
    private var publishedAccessibilityChanges = -1
    /// Trees built so far.
    public private(set) var publishedCount = 0

    /// A publisher for `host`'s window; `windowPlacement` gives screen coordinates (nil: the window is
    /// at the screen's origin); `environment` (nil: the process's) gives the bus addresses. Call
    /// `start()` to connect.
    public init(host: NodeHost, title: String, applicationName: String? = nil, windowPlacement: WindowPlacement?,
                environment: [String: String]? = nil) {
        self.host = host
        self.title = title
        let runtime = host.runtime
        // The publisher is reached weakly: a bridge outliving its app answers `false`.
        let box = WeakPublisher()
        bridge = AtspiBridge(
            configuration: AtspiBridge.Configuration(applicationName: applicationName ?? title, environment: environment),
            windowPlacement: windowPlacement,
            ui: AtspiBridge.UIPort(
                post: { work in runtime.mainQueue.enqueue(work) },
                answer: { request in
                    guard let host = box.publisher?.host else { return request.unanswered }
                    return request.answer(on: host)
                },
                publishTree: { box.publisher?.publish() }))
        box.publisher = self
    }

    /// Starts connecting (on the bridge's thread).
    public func start() { bridge.start() }

    /// Disconnects; no tree is published after.
    public func stop() { bridge.stop() }

    /// Publishes after a frame when the frame may have changed what a screen reader reads (see the
    /// type's notes); `hadEvents` says whether the frame routed input.
    public func frameDidRun(_ record: FrameRecord, hadEvents: Bool) {
        guard bridge.isConnected, let host else { return }
        let focus = host.focusedNode.map(ObjectIdentifier.init)
        let changed = hadEvents || record.commitsApplied > 0 || record.mainQueueItems > 0 || focus != publishedFocus
            || host.runtime.accessibilityChangeCount != publishedAccessibilityChanges
        let movedAndSettled = Layer.changeCount != publishedLayerChanges && !host.needsFrame
        if changed || movedAndSettled { publish() }
    }

    /// Builds the host's tree now and hands it to the bridge (while it is connected).
    public func publish() {
        guard bridge.isConnected, let host else { return }
        publishedFocus = host.focusedNode.map(ObjectIdentifier.init)
        publishedLayerChanges = Layer.changeCount
        publishedAccessibilityChanges = host.runtime.accessibilityChangeCount
        publishedCount += 1
        bridge.publish(host.accessibilityTree(title: title))
    }
}

/// A weak reference to a publisher that the bridge's `Sendable` closures can hold.
/// - Thread: main (its one member)
@MainActor
private final class WeakPublisher: Sendable {
    weak var publisher: AtspiPublisher?
}

extension AtspiUIRequest {
    /// The answer when there is no app to ask: nothing done, no placeholder.
    var unanswered: AtspiUIResponse {
        if case .placeholder = self { return .placeholder(nil) }
        return .done(false)
    }
}
