import Compositor
import Foundation
import Synchronization
import XCTest
@testable import NodeRuntime

/// A list row for tests: fills itself with a colour that encodes its identity, measures to its
/// height at the list's width, and logs its interface-state callbacks.
final class TestRowNode: Node, NodeDrawing, @unchecked Sendable {
    struct DrawParameters: Sendable {
        var color: Color
        var gate: Gate?
    }

    let identity: Int
    let height: Double
    private let log: EventLog?
    private let gate: Gate?

    init(identity: Int, height: Double, log: EventLog? = nil, gate: Gate? = nil) {
        self.identity = identity
        self.height = height
        self.log = log
        self.gate = gate
        super.init()
    }

    override func calculateSizeThatFits(_ constrainedSize: Size) -> Size {
        Size(width: constrainedSize.width.isFinite ? constrainedSize.width : 0, height: height)
    }

    func drawParameters() -> DrawParameters {
        DrawParameters(color: Color(red: UInt8(identity % 251), green: UInt8((identity / 251) % 251), blue: 200), gate: gate)
    }

    static func draw(_ parameters: DrawParameters, in context: inout BitmapContext, info: DrawInfo) {
        parameters.gate?.pass()
        if !info.isCancelled() { context.fill(info.bounds, color: parameters.color) }
    }

    private func record(_ event: @autoclosure () -> String) {
        guard let log else { return }
        log.record("\(identity):\(event())")
    }
    override func didLoad() { record("didLoad") }
    override func layout() { record("layout") }
    override func didEnterPreloadState() { record("+preload") }
    override func didExitPreloadState() { record("-preload") }
    override func didEnterDisplayState() { record("+display") }
    override func didExitDisplayState() { record("-display") }
    override func didEnterVisibleState() { record("+visible") }
    override func didExitVisibleState() { record("-visible") }
    override func interfaceStateDidChange(_ newState: InterfaceState, from oldState: InterfaceState) {
        record("state\(newState)")
    }
}

/// A data source over arrays the test edits: each row has a stable identity and a real height.
@MainActor
final class TestListSource: ListDataSource {
    var identities: [Int]
    var heights: [Double]
    var estimate: Double?
    var log: EventLog?
    var gate: Gate?
    /// Replaces the default row node, for rows with images and other contents.
    var makeNode: (@Sendable (_ identity: Int, _ height: Double) -> Node)?
    /// Rows whose node block ran, in order (UI thread).
    private(set) var requestedRows: [Int] = []

    /// `count` rows of `height`, estimated at `estimate` (by default exactly their height).
    init(count: Int, height: Double = 20, estimate: Double? = nil) {
        identities = Array(0..<count)
        heights = Array(repeating: height, count: count)
        self.estimate = estimate ?? height
    }

    func numberOfRows(in list: ListNode) -> Int { identities.count }

    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        requestedRows.append(row)
        let identity = identities[row], height = heights[row]
        let log = log, gate = gate
        if let makeNode { return { makeNode(identity, height) } }
        return { TestRowNode(identity: identity, height: height, log: log, gate: gate) }
    }

    func estimatedHeightForRow(at row: Int, in list: ListNode) -> Double? { estimate }

    func insert(_ identity: Int, height: Double, at row: Int) {
        identities.insert(identity, at: row)
        heights.insert(height, at: row)
    }

    func remove(at row: Int) {
        identities.remove(at: row)
        heights.remove(at: row)
    }
}

/// A host whose root is a list filling the window, registered as a frame participant.
@MainActor
struct ListHarness {
    let host: NodeHost
    let backend: RecordingRenderBackend
    let list: ListNode
    let source: TestListSource
    var time = 0.0

    init(width: Int = 100, height: Int = 100, source: TestListSource, configure: (ListNode) -> Void = { _ in }) {
        (host, backend) = makeHost(width: width, height: height)
        self.source = source
        list = ListNode()
        configure(list)
        list.dataSource = source
        host.setRootNode(list)
        host.addFrameParticipant(list)
    }

    /// One frame, without waiting for workers.
    @discardableResult
    mutating func frame(_ events: [InputEvent] = [], advance: Double = 1.0 / 60) -> FrameRecord {
        time += advance
        return host.runFrame(time: time, events: events)
    }

    /// Frames until every measure, decode and draw has finished and been committed.
    mutating func settle() {
        for _ in 0..<6 {
            frame()
            host.runtime.scheduler.waitUntilIdle()
        }
        frame()
    }

    /// The row's node, as the test's row type.
    func rowNode(_ row: Int) -> TestRowNode? { list.nodeForRow(row) as? TestRowNode }

    /// Where the row's layer is in the window, if it is on the list.
    func windowFrame(ofRow row: Int) -> Rect? {
        guard let node = list.nodeForRow(row), let layer = node.layerIfLoaded, layer.superlayer != nil else { return nil }
        return layer.frameInRoot
    }

    /// Every row's interface state, by row.
    var states: [InterfaceState] { (0..<list.numberOfRows).map { list.interfaceStateOfRow($0) } }
}

/// The interface state the ranges give a row spanning `[top, top + height)`, computed independently of
/// the list from the tuning, the viewport and the direction.
func expectedState(top: Double, height: Double, offset: Double, viewport: Double, forward: Bool,
                   tuning: ListRangeTuning) -> InterfaceState {
    func overlaps(_ extent: ListRangeTuning.Extent) -> Bool {
        let before = (forward ? extent.trailing : extent.leading) * viewport
        let after = (forward ? extent.leading : extent.trailing) * viewport
        return top < offset + viewport + after && top + height > offset - before
    }
    guard overlaps(tuning.measure) else { return [] }
    var state: InterfaceState = .measureLayout
    if overlaps(tuning.preload) { state.insert(.preload) }
    if overlaps(tuning.display) { state.insert(.display) }
    if top < offset + viewport && top + height > offset { state.insert(.visible) }
    return state
}

@MainActor
extension XCTestCase {
    /// Checks every row's state against `expectedState` for uniform rows of `height`.
    func assertRowStates(_ harness: ListHarness, height: Double, forward: Bool, tuning: ListRangeTuning,
                         file: StaticString = #filePath, line: UInt = #line) {
        let list = harness.list
        for row in 0..<list.numberOfRows {
            let expected = expectedState(top: Double(row) * height, height: height, offset: list.contentOffset,
                                         viewport: list.bounds.height, forward: forward, tuning: tuning)
            XCTAssertEqual(list.interfaceStateOfRow(row), expected,
                           "row \(row) at offset \(list.contentOffset)", file: file, line: line)
        }
    }
}
