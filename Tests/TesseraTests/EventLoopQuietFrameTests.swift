import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime
@testable import Tessera

/// The quiet frame the event loop runs once work it saw under way off the UI thread is done: owed only
/// while that work has not been seen to end, whichever frame sees it end.
@MainActor
final class EventLoopQuietFrameTests: XCTestCase {
    func testASettledWindowIsOwedNoQuietFrameForWorkAnEarlierLoopFrameSaw() async throws {
        let screen = Node()
        screen.backgroundColor = Color(rgb: 0x203040)
        let app = try Application(configuration: .headless(size: Size(width: 60, height: 40)), rootNode: screen)
        defer { app.host.setRootController(nil) }
        try app.settle()
        // The loop's last frame saw a draw under way (the loop ended before it came back); settling
        // then ran frames until nothing was left.
        app.mainWindow.workWasPending = true
        try app.settle()
        XCTAssertTrue(app.host.pendingWork.isEmpty, "\(app.host.pendingWork)")
        XCTAssertFalse(app.mainWindow.workWasPending, "the settling frames saw the work end")
        let frames = app.frameCount, wakes = UIWakeup.shared.wakeCount
        app.runEventLoop(forSeconds: 0.3)
        XCTAssertEqual(app.frameCount, frames, "no frame ran at rest")
        XCTAssertEqual(UIWakeup.shared.wakeCount, wakes, "nothing woke the loop")
    }
}
