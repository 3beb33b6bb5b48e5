import Compositor
@testable import NodeRuntime
import XCTest

/// A host on a recording backend whose output size tests change, driven by a virtual clock.
@MainActor
private final class ControllerTestHost {
    let backend = RecordingRenderBackend(width: 400, height: 300)
    let host: NodeHost
    /// Whole seconds past anything earlier tests left on the shared animator, so offsets stay exact.
    let base: Double

    init() {
        host = NodeHost(compositor: Compositor(backend: backend))
        base = (host.runtime.animator.now + 10).rounded(.down)
        frame(at: 0)
    }

    @discardableResult
    func frame(at offset: Double, _ events: [InputEvent] = []) -> FrameRecord {
        host.runFrame(time: base + offset, events: events)
    }

    func resize(_ width: Int, _ height: Int) {
        backend.outputPixelSize = (width, height)
        host.viewportDidChange()
    }
}

/// One ordered record of callbacks from controllers and nodes, with the thread each ran on.
private final class CallbackLog {
    private(set) var entries: [String] = []
    private(set) var onUIThread: [Bool] = []

    func add(_ entry: String) {
        entries.append(entry)
        onUIThread.append(UIThread.isCurrent)
    }

    func clear() {
        entries.removeAll()
        onUIThread.removeAll()
    }

    func count(_ entry: String) -> Int { entries.filter { $0 == entry }.count }
}

/// A node that logs its load, layout and visibility.
private final class LoggingNode: Node, @unchecked Sendable {
    let log: CallbackLog
    let name: String
    init(_ name: String, log: CallbackLog) {
        self.name = name
        self.log = log
        super.init()
        debugName = name
    }
    override func didLoad() { log.add("\(name).didLoad") }
    override func layout() { log.add("\(name).layout") }
    override func didEnterVisibleState() { log.add("\(name).didEnterVisible") }
    override func didExitVisibleState() { log.add("\(name).didExitVisible") }
}

/// A controller that logs its lifecycle and the keys it is given.
private final class LoggingController: NodeController {
    let log: CallbackLog
    let name: String
    var boundsSeenInLayout: [Rect] = []
    var interfaceStateAtDisappear: InterfaceState?
    var keys: [Key] = []

    init(_ name: String, log: CallbackLog) {
        self.name = name
        self.log = log
        super.init(node: LoggingNode("\(name).node", log: log))
    }

    override func loadView() { log.add("\(name).loadView") }
    override func viewDidLoad() { log.add("\(name).viewDidLoad") }
    override func viewWillLayoutSubviews() {
        log.add("\(name).viewWillLayoutSubviews")
        boundsSeenInLayout.append(node.frame)
    }
    override func viewWillAppear() { log.add("\(name).viewWillAppear") }
    override func viewDidAppear() { log.add("\(name).viewDidAppear") }
    override func viewWillDisappear() { log.add("\(name).viewWillDisappear") }
    override func viewDidDisappear() {
        log.add("\(name).viewDidDisappear")
        interfaceStateAtDisappear = node.interfaceState
    }
    override func handleKey(_ key: Key, modifiers: KeyModifiers) -> Bool {
        keys.append(key)
        return false
    }
}

@MainActor
final class NodeControllerTests: XCTestCase {
    // MARK: NodeController on the host

    func testPresentationRunsTheLifecycleInOrder() async {
        let t = ControllerTestHost()
        let log = CallbackLog()
        let controller = LoggingController("A", log: log)
        XCTAssertFalse(controller.isViewLoaded, "nothing loads before the node is needed")
        XCTAssertEqual(log.entries, [])

        t.host.setRootController(controller)
        XCTAssertEqual(log.entries, [
            "A.loadView", "A.viewWillAppear", "A.node.didLoad", "A.viewDidLoad",
            "A.viewWillLayoutSubviews", "A.node.layout", "A.node.didEnterVisible", "A.viewDidAppear",
        ])
        XCTAssertTrue(t.host.rootController === controller)
        XCTAssertTrue(t.host.rootNode === controller.node)
        XCTAssertEqual(controller.node.frame, Rect(x: 0, y: 0, width: 400, height: 300))
        XCTAssertEqual(controller.node.interfaceState, .onScreen)
        XCTAssertTrue(controller.isPresented)
        XCTAssertEqual(log.onUIThread, Array(repeating: true, count: log.entries.count))
    }

    func testLoadRunsOnceAcrossPresentations() async {
        let t = ControllerTestHost()
        let log = CallbackLog()
        let controller = LoggingController("A", log: log)
        t.host.setRootController(controller)
        t.host.setRootController(nil)
        t.host.setRootController(controller)
        t.frame(at: 0.1)
        XCTAssertEqual(log.count("A.loadView"), 1)
        XCTAssertEqual(log.count("A.viewDidLoad"), 1)
        XCTAssertEqual(log.count("A.node.didLoad"), 1)
        XCTAssertEqual(log.count("A.viewWillAppear"), 2)
        XCTAssertEqual(log.count("A.viewDidDisappear"), 1)
    }

    func testResizeLaysTheRootOutThroughTheController() async {
        let t = ControllerTestHost()
        let log = CallbackLog()
        let controller = LoggingController("A", log: log)
        t.host.setRootController(controller)
        log.clear()

        t.resize(640, 480)
        XCTAssertEqual(log.entries, ["A.viewWillLayoutSubviews", "A.node.layout"])
        XCTAssertEqual(controller.node.frame, Rect(x: 0, y: 0, width: 640, height: 480))
        XCTAssertEqual(controller.boundsSeenInLayout.last, Rect(x: 0, y: 0, width: 640, height: 480),
                       "the node already has its new size when the controller is told")

        t.resize(200, 100)
        t.frame(at: 0.1)
        XCTAssertEqual(log.count("A.viewWillLayoutSubviews"), 2)
        XCTAssertEqual(controller.node.frame, Rect(x: 0, y: 0, width: 200, height: 100))
        XCTAssertEqual(log.onUIThread, Array(repeating: true, count: log.entries.count))
    }

    func testRemovalEndsWithViewDidDisappear() async {
        let t = ControllerTestHost()
        let log = CallbackLog()
        let first = LoggingController("A", log: log), second = LoggingController("B", log: log)
        t.host.setRootController(first)
        log.clear()

        t.host.setRootController(second)
        let a = log.entries.filter { $0.hasPrefix("A.") }
        XCTAssertEqual(a, ["A.viewWillDisappear", "A.node.didExitVisible", "A.viewDidDisappear"])
        XCTAssertLessThan(log.entries.firstIndex(of: "A.viewWillDisappear")!, log.entries.firstIndex(of: "B.viewWillAppear")!)
        XCTAssertEqual(first.interfaceStateAtDisappear, [], "the node has left its states by then")
        XCTAssertFalse(first.isPresented)
        XCTAssertNil(first.node.layerIfLoaded?.superlayer)

        // A plain root node ends the controller's presentation too.
        log.clear()
        t.host.setRootNode(Node())
        XCTAssertNil(t.host.rootController)
        XCTAssertEqual(log.entries, ["B.viewWillDisappear", "B.node.didExitVisible", "B.viewDidDisappear"])
        XCTAssertEqual(log.onUIThread, Array(repeating: true, count: log.entries.count))
    }

    func testKeysReachTheRootControllerUnlessTheKeyHandlerTakesThem() async {
        let t = ControllerTestHost()
        let controller = LoggingController("A", log: CallbackLog())
        t.host.setRootController(controller)
        t.host.keyHandler = { key, _ in key == .space }
        t.frame(at: 0.1, [.keyDown(.space, modifiers: []), .keyDown(.enter, modifiers: [.shift])])
        XCTAssertEqual(controller.keys, [.enter])
    }

    // MARK: NavigationController

    private func presentNavigation(_ t: ControllerTestHost, log: CallbackLog) -> (NavigationController, LoggingController) {
        let root = LoggingController("A", log: log)
        let navigation = NavigationController(rootController: root)
        t.host.setRootController(navigation)
        t.frame(at: 0)
        return (navigation, root)
    }

    func testPushAnimatedSlidesInThenTheOldControllerDisappears() async {
        let t = ControllerTestHost()
        let log = CallbackLog()
        let (navigation, a) = presentNavigation(t, log: log)
        XCTAssertEqual(a.node.interfaceState, .onScreen)
        XCTAssertEqual(a.node.frame, Rect(x: 0, y: 0, width: 400, height: 300))
        XCTAssertTrue(a.navigationController === navigation)
        log.clear()

        let b = LoggingController("B", log: log)
        navigation.push(b, animated: true)
        XCTAssertEqual(log.entries.filter { $0.hasPrefix("A.") }, ["A.viewWillDisappear"])
        XCTAssertTrue(log.entries.contains("B.viewWillAppear"))
        XCTAssertLessThan(log.entries.firstIndex(of: "B.viewWillAppear")!, log.entries.firstIndex(of: "B.node.didEnterVisible")!)
        XCTAssertEqual(b.node.frame, Rect(x: 0, y: 0, width: 400, height: 300), "the pushed node fills the bounds")
        XCTAssertEqual(b.node.layer.frame.origin.x, 400)
        XCTAssertTrue(navigation.viewControllers.elementsEqual([a, b], by: ===))
        XCTAssertTrue(navigation.topController === b)
        XCTAssertTrue(b.navigationController === navigation)

        t.frame(at: 0.1)
        let x = b.node.layer.frame.origin.x
        XCTAssertTrue(x > 0 && x < 400, "mid-slide x = \(x)")
        XCTAssertLessThan(a.node.layer.frame.origin.x, 0, "the old screen moves a little left")
        XCTAssertEqual(navigation.node.subnodes.count, 2, "both screens during the slide")
        XCTAssertFalse(log.entries.contains("A.viewDidDisappear"))
        XCTAssertEqual(a.node.interfaceState, .onScreen)

        t.frame(at: 0.2)
        t.frame(at: 0.3)
        XCTAssertEqual(b.node.layer.frame.origin, .zero)
        // The container is laid out again after the hierarchy changed (which lays A out too): only the
        // appearance and interface-state order is asserted here.
        XCTAssertEqual(log.entries.filter { $0.hasPrefix("A.") && !$0.hasSuffix(".layout") },
                       ["A.viewWillDisappear", "A.node.didExitVisible", "A.viewDidDisappear"])
        XCTAssertEqual(a.node.interfaceState, [])
        XCTAssertEqual(a.interfaceStateAtDisappear, [])
        XCTAssertTrue(navigation.node.subnodes.elementsEqual([b.node], by: ===))
        XCTAssertEqual(log.entries.last, "B.viewDidAppear")
        XCTAssertFalse(navigation.isTransitioning)
        XCTAssertEqual(log.onUIThread, Array(repeating: true, count: log.entries.count))
    }

    func testPopAnimatedReversesThePush() async {
        let t = ControllerTestHost()
        let log = CallbackLog()
        let (navigation, a) = presentNavigation(t, log: log)
        let b = LoggingController("B", log: log)
        navigation.push(b, animated: false)
        XCTAssertEqual(b.node.layer.frame.origin, .zero, "a push without animation is immediate")
        XCTAssertEqual(a.node.interfaceState, [])
        log.clear()

        let popped = navigation.popController(animated: true)
        XCTAssertTrue(popped === b)
        XCTAssertTrue(navigation.viewControllers.elementsEqual([a], by: ===))
        XCTAssertEqual(Array(log.entries.prefix(2)), ["B.viewWillDisappear", "A.viewWillAppear"])
        XCTAssertEqual(a.node.interfaceState, .onScreen)
        XCTAssertTrue(navigation.node.subnodes.first === a.node, "the screen below goes underneath")

        t.frame(at: 0.1)
        let bx = b.node.layer.frame.origin.x, ax = a.node.layer.frame.origin.x
        XCTAssertTrue(bx > 0 && bx < 400, "outgoing mid-slide x = \(bx)")
        XCTAssertTrue(ax < 0 && ax > -400, "incoming mid-slide x = \(ax)")
        XCTAssertFalse(log.entries.contains("B.viewDidDisappear"))

        t.frame(at: 0.3)
        XCTAssertEqual(a.node.layer.frame.origin, .zero)
        XCTAssertTrue(log.entries.contains("B.viewDidDisappear"))
        XCTAssertEqual(b.node.interfaceState, [])
        XCTAssertNil(b.node.supernode)
        XCTAssertNil(b.navigationController)
        XCTAssertEqual(log.entries.last, "A.viewDidAppear")
        XCTAssertNil(navigation.popController(animated: true), "the root controller stays")
    }

    func testEscapePopsOnlyWhenThereIsSomethingToGoBackTo() async {
        let t = ControllerTestHost()
        let log = CallbackLog()
        let (navigation, a) = presentNavigation(t, log: log)

        t.frame(at: 0.1, [.keyDown(.escape, modifiers: [])])
        XCTAssertEqual(navigation.viewControllers.count, 1)
        XCTAssertEqual(a.keys, [.escape], "with one controller Escape goes to it")
        XCTAssertEqual(a.node.interfaceState, .onScreen)

        let b = LoggingController("B", log: log)
        navigation.push(b, animated: false)
        t.host.runFrame(time: t.base + 0.2, events: [.keyDown(.escape, modifiers: [])])
        XCTAssertTrue(navigation.viewControllers.elementsEqual([a], by: ===))
        XCTAssertEqual(b.keys, [], "the navigation controller took it")
        t.frame(at: 0.5)
        XCTAssertEqual(b.node.interfaceState, [])
        XCTAssertEqual(a.node.layer.frame.origin, .zero)

        t.frame(at: 0.6, [.keyDown(.character("x"), modifiers: [])])
        XCTAssertEqual(a.keys, [.escape, .character("x")], "other keys go to the top controller")
    }

    func testResizeLaysOutTheShownControllers() async throws {
        let t = ControllerTestHost()
        let log = CallbackLog()
        let (navigation, a) = presentNavigation(t, log: log)
        log.clear()

        t.resize(640, 480)
        XCTAssertEqual(navigation.node.frame, Rect(x: 0, y: 0, width: 640, height: 480))
        XCTAssertEqual(a.node.frame, Rect(x: 0, y: 0, width: 640, height: 480))
        XCTAssertEqual(log.entries, ["A.viewWillLayoutSubviews", "A.node.layout"])
        XCTAssertEqual(a.boundsSeenInLayout.last, Rect(x: 0, y: 0, width: 640, height: 480))

        let b = LoggingController("B", log: log)
        navigation.push(b, animated: true)
        XCTAssertEqual(b.node.frame, Rect(x: 0, y: 0, width: 640, height: 480))
        t.frame(at: 0.1)
        t.resize(500, 400)
        XCTAssertEqual(a.node.frame.size, Size(width: 500, height: 400), "both screens during a slide")
        XCTAssertEqual(b.node.frame.size, Size(width: 500, height: 400))
        t.frame(at: 0.4)
        _ = try t.host.settle(timeout: 10)
        XCTAssertEqual(b.node.layer.frame, Rect(x: 0, y: 0, width: 500, height: 400))
    }

    func testPopWithoutAnimationDuringASlideLeavesTheScreenInPlace() async {
        let t = ControllerTestHost()
        let log = CallbackLog()
        let (navigation, a) = presentNavigation(t, log: log)
        let b = LoggingController("B", log: log)
        navigation.push(b, animated: true)
        t.frame(at: 0.1)
        log.clear()

        navigation.popController(animated: false)
        // The push completes first (B appears), then the pop runs at once.
        XCTAssertEqual(log.entries.filter { $0.hasPrefix("B.view") },
                       ["B.viewDidAppear", "B.viewWillDisappear", "B.viewDidDisappear"])
        XCTAssertEqual(a.node.layer.frame.origin, .zero)
        XCTAssertEqual(b.node.interfaceState, [])
        for step in 2...5 { t.frame(at: Double(step) / 10) }
        XCTAssertEqual(a.node.layer.frame.origin, .zero, "the cut-short slide does not move it again")
        XCTAssertTrue(navigation.node.subnodes.elementsEqual([a.node], by: ===))
    }

    func testPushBeforePresentationLoadsOnlyTheTop() async {
        let t = ControllerTestHost()
        let log = CallbackLog()
        let a = LoggingController("A", log: log), b = LoggingController("B", log: log)
        let navigation = NavigationController(rootController: a)
        navigation.push(b, animated: true)
        XCTAssertEqual(log.entries, [], "nothing is shown yet")

        t.host.setRootController(navigation)
        XCTAssertFalse(a.isViewLoaded)
        XCTAssertTrue(b.isViewLoaded)
        XCTAssertEqual(log.entries, [
            "B.loadView", "B.viewWillAppear", "B.node.didLoad", "B.viewDidLoad",
            "B.viewWillLayoutSubviews", "B.node.layout", "B.node.didEnterVisible", "B.viewDidAppear",
        ])
        XCTAssertEqual(b.node.layer.frame, Rect(x: 0, y: 0, width: 400, height: 300))

        log.clear()
        t.host.setRootController(nil)
        XCTAssertEqual(log.entries, ["B.viewWillDisappear", "B.node.didExitVisible", "B.viewDidDisappear"])
    }
}
