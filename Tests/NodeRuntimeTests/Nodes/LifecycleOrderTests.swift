import Compositor
import XCTest
@testable import NodeRuntime

/// Logs every lifecycle step of a node: measure, preload, display, load, layout, visible, and leaving.
private final class StepNode: Node, @unchecked Sendable {
    let log: StepLog
    let name: String
    init(_ name: String, log: StepLog) {
        self.name = name
        self.log = log
        super.init()
    }
    override func didLoad() { log.add("\(name).didLoad") }
    override func layout() { log.add("\(name).layout") }
    override func didEnterPreloadState() { log.add("\(name).preload") }
    override func didEnterDisplayState() { log.add("\(name).display") }
    override func didEnterVisibleState() { log.add("\(name).visible") }
    override func didExitVisibleState() { log.add("\(name).exitVisible") }
    override func didExitDisplayState() { log.add("\(name).exitDisplay") }
    override func didExitPreloadState() { log.add("\(name).exitPreload") }
    override func interfaceStateDidChange(_ newState: InterfaceState, from oldState: InterfaceState) {
        if newState.contains(.measureLayout) && !oldState.contains(.measureLayout) { log.add("\(name).measure") }
    }
}

private final class StepLog {
    private(set) var entries: [String] = []
    private(set) var onUIThread = true
    func add(_ entry: String) {
        entries.append(entry)
        onUIThread = onUIThread && UIThread.isCurrent
    }
    func clear() { entries.removeAll() }
    /// The entries about `name`, in order.
    func of(_ name: String) -> [String] { entries.filter { $0.hasPrefix(name + ".") } }
}

private final class StepController: NodeController {
    let log: StepLog
    let name: String
    init(_ name: String, log: StepLog) {
        self.name = name
        self.log = log
        super.init(node: StepNode("\(name).node", log: log))
    }
    override func loadView() { log.add("\(name).loadView") }
    override func viewDidLoad() { log.add("\(name).viewDidLoad") }
    override func viewWillAppear() { log.add("\(name).viewWillAppear") }
    override func viewWillLayoutSubviews() { log.add("\(name).viewWillLayoutSubviews") }
    override func viewDidAppear() { log.add("\(name).viewDidAppear") }
    override func viewWillDisappear() { log.add("\(name).viewWillDisappear") }
    override func viewDidDisappear() { log.add("\(name).viewDidDisappear") }
}

/// Every container brings a node on screen in one order: measure → preload → display and `didLoad` →
/// `layout()` → visible, with `viewWillAppear` before any of it and `viewDidDisappear` after the node
/// has left every state.
@MainActor
final class LifecycleOrderTests: XCTestCase {
    private let appearing = [
        "X.loadView", "X.viewWillAppear", "X.node.measure", "X.node.preload", "X.node.didLoad", "X.node.display",
        "X.viewDidLoad", "X.viewWillLayoutSubviews", "X.node.layout", "X.node.visible", "X.viewDidAppear",
    ]
    private let disappearing = [
        "X.viewWillDisappear", "X.node.exitVisible", "X.node.exitDisplay", "X.node.exitPreload", "X.viewDidDisappear",
    ]

    private func expected(_ steps: [String], _ name: String) -> [String] {
        steps.map { $0.replacingOccurrences(of: "X.", with: "\(name).") }
    }

    private func makeHost() -> NodeHost {
        NodeHost(compositor: Compositor(backend: RecordingRenderBackend(width: 400, height: 300)))
    }

    func testHostRootController() async {
        let host = makeHost()
        let log = StepLog()
        let a = StepController("A", log: log)
        host.setRootController(a)
        XCTAssertEqual(log.of("A"), expected(appearing, "A"))
        log.clear()
        host.setRootController(nil)
        XCTAssertEqual(log.of("A"), expected(disappearing, "A"))
        XCTAssertTrue(log.onUIThread)
    }

    func testTabSelection() async {
        let host = makeHost()
        let log = StepLog()
        let a = StepController("A", log: log), b = StepController("B", log: log)
        let tabs = TabController(controllers: [a, b], tabBar: Node())
        host.setRootController(tabs)
        XCTAssertEqual(log.of("A"), expected(appearing, "A"))
        XCTAssertEqual(log.of("B"), [], "a tab not shown is not loaded")
        log.clear()
        tabs.select(1)
        XCTAssertEqual(log.of("A"), expected(disappearing, "A"))
        XCTAssertEqual(log.of("B"), expected(appearing, "B"))
        XCTAssertTrue(b.node.layer.superlayer === tabs.node.layer, "the shown screen is in the container")
        XCTAssertTrue(log.onUIThread)
    }

    /// A tab chosen before the tabs are on screen is the one shown, and `selectionDidChange` says so
    /// (an app highlights its tab bar from it).
    func testATabChosenBeforeTheTabsShowIsShownAndReported() async {
        let host = makeHost()
        let log = StepLog()
        let a = StepController("A", log: log), b = StepController("B", log: log)
        let tabs = TabController(controllers: [a, b], tabBar: Node())
        var reported: [Int] = []
        tabs.selectionDidChange = { reported.append($0) }
        tabs.select(1)
        XCTAssertEqual(reported, [1], "called after the selection changes, shown or not")
        XCTAssertEqual(log.of("A"), [], "nothing is shown yet")
        host.setRootController(tabs)
        XCTAssertEqual(log.of("B"), expected(appearing, "B"))
        XCTAssertEqual(log.of("A"), [], "the first tab, not chosen, is not loaded")
        tabs.select(1)
        XCTAssertEqual(reported, [1], "the shown tab again changes nothing")
        tabs.select(0)
        XCTAssertEqual(reported, [1, 0])
    }

    func testNavigationPush() async {
        let host = makeHost()
        let log = StepLog()
        let a = StepController("A", log: log), b = StepController("B", log: log)
        let navigation = NavigationController(rootController: a)
        host.setRootController(navigation)
        XCTAssertEqual(log.of("A"), expected(appearing, "A"))
        log.clear()
        navigation.push(b, animated: false)
        XCTAssertEqual(log.of("B"), expected(appearing, "B"))
        XCTAssertEqual(log.of("A"), expected(disappearing, "A"))
        XCTAssertTrue(log.onUIThread)
    }

    func testSubnodeAddedToALoadedParent() async {
        let host = makeHost()
        let log = StepLog()
        let root = Node()
        host.setRootNode(root)
        let child = StepNode("C", log: log)
        child.frame = Rect(x: 0, y: 0, width: 10, height: 10)
        root.addSubnode(child)
        XCTAssertEqual(log.of("C"), ["C.measure", "C.preload", "C.didLoad", "C.display", "C.layout", "C.visible"])
        XCTAssertTrue(child.layer.superlayer === root.layer)
        log.clear()
        child.removeFromSupernode()
        XCTAssertEqual(log.of("C"), ["C.exitVisible", "C.exitDisplay", "C.exitPreload"])
        XCTAssertNil(child.layer.superlayer)
    }

    func testSubnodeAddedToALoadedParentFromAnotherThreadJoinsAtTheNextFrame() async {
        let host = makeHost()
        let log = StepLog()
        let root = Node()
        host.setRootNode(root)
        let child = UncheckedSendable(StepNode("C", log: log))
        let parent = UncheckedSendable(root)
        onBackgroundThread {
            child.value.frame = Rect(x: 0, y: 0, width: 10, height: 10)
            parent.value.addSubnode(child.value)
        }
        XCTAssertTrue(root.subnodes.contains { $0 === child.value }, "in the tree at once")
        XCTAssertEqual(log.entries, [], "its layer and states wait for the UI thread")
        host.runFrame(time: 0, events: [])
        XCTAssertEqual(log.of("C"), ["C.measure", "C.preload", "C.didLoad", "C.display", "C.layout", "C.visible"])
        XCTAssertTrue(child.value.layer.superlayer === root.layer)
        XCTAssertTrue(log.onUIThread)
        onBackgroundThread { child.value.removeFromSupernode() }
        host.runFrame(time: 1.0 / 60, events: [])
        XCTAssertNil(child.value.layer.superlayer)
        XCTAssertEqual(child.value.interfaceState, [])
    }

    /// A subnode inserted from another thread while the UI thread loads the parent: the insertion is
    /// part of the load or attached at the next frame, never left without a layer.
    func testInsertRacingTheLoadAlwaysEndsWithALayer() async {
        let host = makeHost()
        let root = Node()
        host.setRootNode(root)
        for round in 0..<200 {
            let parent = Node()
            parent.frame = Rect(x: 0, y: 0, width: 20, height: 20)
            let children = (0..<4).map { _ in Node() }
            let box = UncheckedSendable((parent, children))
            let go = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                go.wait()
                for child in box.value.1 { box.value.0.addSubnode(child) }
                done.signal()
            }
            go.signal()
            root.addSubnode(parent)  // loads the parent's layer tree, racing the insertions
            done.wait()
            host.runFrame(time: Double(round) / 60, events: [])
            for child in children {
                XCTAssertTrue(child.layer.superlayer === parent.layer, "round \(round): every subnode has its layer in place")
                XCTAssertEqual(child.interfaceState, parent.interfaceState, "round \(round)")
            }
            parent.removeFromSupernode()
        }
    }
}
