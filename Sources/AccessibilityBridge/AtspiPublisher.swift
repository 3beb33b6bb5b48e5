public import Compositor
import FoundationEssentials
import Glibc
import Dispatch
public import NodeRuntime

/// Connects an application's windows (a `NodeHost` each) to an `AtspiBridge`: after each frame a
/// window's host ran, it publishes that window's new accessibility tree when something a screen
/// reader reads may have changed, and it answers the bridge's requests on the UI thread, in the
/// window whose tree holds the element asked about. `Application` makes one for its windows unless
/// accessibility is turned off: the window it is made with, then those `addWindow` adds, each a
/// frame (a child of the application) in the order they were added.
///
/// A tree is built only while the bridge is connected, and only after a frame of its window that had
/// input, applied commits, ran main-queue work, moved the focus or followed a change of what screen
/// readers read (a label or value set on a node, which need not show), or, once the window comes to
/// rest, after frames that moved layers (a scroll or an animation that ended): an app at rest builds
/// none. Commits and main-queue work are the process's, run by whichever window's frame comes first:
/// the other windows build their tree at their next frame.
///
/// Each window's tree has a window element of its own id at its root (the first window's is 0,
/// as a host's tree has; the others' are ids no node or placeholder has), so element ids are unique
/// across the windows: a node's id is the process's.
/// - Thread: main
@MainActor
public final class AtspiPublisher {
    /// One window as published.
    private final class PublishedWindow {
        weak var host: NodeHost?
        /// The window element's id.
        let id: Int
        var title: String
        let placement: WindowPlacement?
        /// The focused node at the last tree, to see the focus move.
        var publishedFocus: ObjectIdentifier?
        /// `Layer.changeCount` at the last tree.
        var publishedLayerChanges = -1
        /// `Runtime.accessibilityChangeCount` at the last tree: a label or value set since, which need
        /// not show, makes a new one.
        var publishedAccessibilityChanges = -1
        /// Another window's frame applied commits or ran main-queue work (the process's, which may
        /// have changed this window) since this window's last tree.
        var processWorkSinceTree = false

        init(host: NodeHost, id: Int, title: String, placement: WindowPlacement?) {
            self.host = host
            self.id = id
            self.title = title
            self.placement = placement
        }
    }

    /// The bridge this publisher feeds.
    public let bridge: AtspiBridge
    /// The windows, in the order screen readers list them.
    private var windows: [PublishedWindow]
    /// Windows added so far (their ids are made from it).
    private var windowsAdded = 0
    /// The title of the window the publisher was made with (the name of its tree's window element);
    /// kept when that window was removed.
    private var firstTitle: String
    /// Trees built so far, in every window.
    public private(set) var publishedCount = 0

    /// The title of the window the publisher was made with: the name of its tree's window element.
    public var title: String {
        get { windows.first { $0.id == 0 }?.title ?? firstTitle }
        set {
            firstTitle = newValue
            if let window = windows.first(where: { $0.id == 0 }), let host = window.host { setTitle(newValue, of: host) }
        }
    }

    /// A publisher for `host`'s window; `windowPlacement` gives screen coordinates (nil: the window is
    /// at the screen's origin); `environment` (nil: the process's) gives the bus addresses. Call
    /// `start()` to connect.
    public init(host: NodeHost, title: String, applicationName: String? = nil, windowPlacement: WindowPlacement?,
                environment: [String: String]? = nil) {
        firstTitle = title
        windows = [PublishedWindow(host: host, id: 0, title: title, placement: windowPlacement)]
        let runtime = host.runtime
        // The publisher is reached weakly: a bridge outliving its app answers `false`.
        let box = WeakPublisher()
        bridge = AtspiBridge(
            configuration: AtspiBridge.Configuration(applicationName: applicationName ?? title, environment: environment),
            windowPlacement: windowPlacement,
            ui: AtspiBridge.UIPort(
                post: { work in runtime.mainQueue.enqueue(work) },
                answerInWindow: { request, window in
                    guard let host = box.publisher?.host(ofWindow: window) else { return request.unanswered }
                    return request.answer(on: host)
                },
                publishTree: { box.publisher?.publish() }))
        box.publisher = self
    }

    /// Starts connecting (on the bridge's thread).
    public func start() { bridge.start() }

    /// Disconnects; no tree is published after.
    public func stop() { bridge.stop() }

    /// The element id of the `number`th window added (0: the one the publisher was made with): a
    /// negative id of a kind no node's link or list row has (`AccessibilityElement.placeholderID`).
    static func windowID(number: Int) -> Int {
        number == 0 ? 0 : -((number << 24) | 3)
    }

    /// The host of the window whose element id is `id`.
    func host(ofWindow id: Int) -> NodeHost? {
        windows.first { $0.id == id }?.host
    }

    /// The window element id of `host`'s window; nil when it is not one of the windows.
    public func windowID(of host: NodeHost) -> Int? {
        windows.first { $0.host === host }?.id
    }

    /// Adds `host`'s window after the others, named `title` (a window already added keeps its
    /// place); its tree is published now while the bridge is connected.
    public func addWindow(host: NodeHost, title: String, windowPlacement: WindowPlacement?) {
        guard !windows.contains(where: { $0.host === host }) else { return }
        windowsAdded += 1
        let window = PublishedWindow(host: host, id: Self.windowID(number: windowsAdded), title: title, placement: windowPlacement)
        windows.append(window)
        bridge.setWindows(listed)
        publish(window)
    }

    /// Removes `host`'s window: screen readers see it go.
    public func removeWindow(host: NodeHost) {
        // A window whose host is gone goes too.
        let remaining = windows.filter { $0.host != nil && $0.host !== host }
        guard remaining.count != windows.count else { return }
        windows = remaining
        bridge.setWindows(listed)
    }

    /// Names `host`'s window `title` (its window element's name); a new tree says so.
    public func setTitle(_ title: String, of host: NodeHost) {
        guard let window = windows.first(where: { $0.host === host }), window.title != title else { return }
        window.title = title
        if window.id == 0 { firstTitle = title }
        publish(window)
    }

    /// The windows as the bridge lists them.
    private var listed: [AtspiBridge.Window] {
        windows.map { AtspiBridge.Window(id: $0.id, placement: $0.placement) }
    }

    /// Publishes after a frame of the window the publisher was made with when the frame may have
    /// changed what a screen reader reads (see the type's notes); `hadEvents` says whether the frame
    /// routed input.
    public func frameDidRun(_ record: FrameRecord, hadEvents: Bool) {
        guard let window = windows.first(where: { $0.id == 0 }) else { return }
        frameDidRun(record, hadEvents: hadEvents, in: window)
    }

    /// Publishes after a frame of `host`'s window when the frame may have changed what a screen
    /// reader reads (see the type's notes); `hadEvents` says whether the frame routed input.
    public func frameDidRun(_ record: FrameRecord, hadEvents: Bool, host: NodeHost) {
        guard let window = windows.first(where: { $0.host === host }) else { return }
        frameDidRun(record, hadEvents: hadEvents, in: window)
    }

    private func frameDidRun(_ record: FrameRecord, hadEvents: Bool, in window: PublishedWindow) {
        guard bridge.isConnected, let host = window.host else { return }
        // Commits and main-queue work are the process's: whichever window's frame ran them may have
        // changed any window (a screen reader's press in one window runs in the frame of another).
        let processWork = record.commitsApplied > 0 || record.mainQueueItems > 0
        if processWork {
            for other in windows where other !== window { other.processWorkSinceTree = true }
        }
        let focus = host.focusedNode.map(ObjectIdentifier.init)
        let changed = hadEvents || processWork || window.processWorkSinceTree || focus != window.publishedFocus
            || host.runtime.accessibilityChangeCount != window.publishedAccessibilityChanges
        let movedAndSettled = Layer.changeCount != window.publishedLayerChanges && !host.needsFrame
        if changed || movedAndSettled { publish(window) }
    }

    /// Builds every window's tree now and hands them to the bridge (while it is connected).
    public func publish() {
        for window in windows { publish(window) }
    }

    private func publish(_ window: PublishedWindow) {
        guard bridge.isConnected, let host = window.host else { return }
        window.publishedFocus = host.focusedNode.map(ObjectIdentifier.init)
        window.publishedLayerChanges = Layer.changeCount
        window.publishedAccessibilityChanges = host.runtime.accessibilityChangeCount
        window.processWorkSinceTree = false
        publishedCount += 1
        var tree = host.accessibilityTree(title: window.title)
        tree.root.id = window.id
        bridge.publish(tree)
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
