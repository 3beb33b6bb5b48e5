import Dispatch
import Foundation
import Tessera
import XCTest
@testable import AccessibilityBridge
@testable import NodeRuntime

/// Whether a `WindowPlacement`'s lock was free when an observer it let go was released.
private final class ReleaseOutcome: @unchecked Sendable {
    var released = false
    var lockWasFree = false
}

/// Captured by an observer: as it goes, another thread reads the placement, which waits while the
/// placement's lock is held.
private final class ReleaseProbe: @unchecked Sendable {
    let placement: WindowPlacement
    let outcome: ReleaseOutcome

    init(placement: WindowPlacement, outcome: ReleaseOutcome) {
        self.placement = placement
        self.outcome = outcome
    }

    deinit {
        let placement = self.placement
        let read = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = placement.state
            read.signal()
        }
        outcome.released = true
        outcome.lockWasFree = read.wait(timeout: .now() + 1) == .success
    }
}

/// Screen readers and every window, where the windows come and go around the bridge: a window
/// under a modal dialog, windows listed and let go, the placements the bridge's thread observes.
@MainActor
final class AtspiWindowsAuditTests: XCTestCase {
    /// A window under a modal dialog takes no input from the user, and none from a screen reader
    /// either: a press or a focus asked of its elements does nothing until the dialog closes.
    func testAScreenReadersRequestsInAWindowUnderAModalDialogDoNothing() async throws {
        var configuration = Application.Configuration.headless(size: Size(width: 160, height: 120))
        configuration.accessibility = false
        let button = ButtonNode(title: "Press")
        var presses = 0
        button.addTarget(for: .primaryActionTriggered) { _, _ in presses += 1 }
        let app = try Application(configuration: configuration, rootNode: button)
        defer { app.close() }
        try app.settle()
        _ = app.host.accessibilityTree(title: "Main")
        let element = button.accessibilityIdentifier
        let dialog = try app.openWindow(configuration: .init(title: "dialog", size: Size(width: 80, height: 60), scale: 1),
                                        rootController: nil, modalFor: app.mainWindow)
        XCTAssertEqual(AtspiUIRequest.perform(.press, element: element).answer(on: app.host), .done(false))
        XCTAssertEqual(AtspiUIRequest.focus(element: element).answer(on: app.host), .done(false))
        app.frame()
        XCTAssertEqual(presses, 0, "the press under the dialog pressed nothing")
        XCTAssertFalse(app.host.focusedNode === button, "nor did the focus move there")

        dialog.close()
        XCTAssertEqual(AtspiUIRequest.perform(.press, element: element).answer(on: app.host), .done(true))
        app.frame()
        XCTAssertEqual(presses, 1, "once the dialog closed, the press reaches the button")
    }

    /// The bridge's thread stops observing the placement of a window that went (and `stop()` every
    /// window's): the observer it lets go, and what it holds, are released outside the placement's
    /// lock, which the window's thread takes as it reads its events.
    func testAPlacementLetsItsObserverGoOutsideItsLock() async throws {
        let placement = WindowPlacement()
        let outcome = ReleaseOutcome()
        do {
            let probe = ReleaseProbe(placement: placement, outcome: outcome)
            placement.setObserver { [probe] _ in _ = probe }
        }
        XCTAssertFalse(outcome.released)
        placement.setObserver(nil)
        XCTAssertTrue(outcome.released, "the observer went")
        XCTAssertTrue(outcome.lockWasFree, "released outside the placement's lock")
    }

    /// A window listed and let go before the bridge's thread looked, and a host added again, never
    /// reuse a window id: a request for an element of a window that went while it waited finds no host.
    func testWindowsThatComeAndGoNeverReuseAnIdAndRequestsForAGoneWindowFindNoHost() async throws {
        var configuration = Application.Configuration.headless(size: Size(width: 100, height: 80))
        configuration.accessibility = false
        let app = try Application(configuration: configuration, rootNode: Node())
        defer { app.close() }
        let second = try app.openWindow(configuration: .init(title: "second", size: Size(width: 70, height: 50), scale: 1),
                                        rootController: nil)
        let publisher = AtspiPublisher(host: app.host, title: "Main", windowPlacement: nil,
                                       environment: ["AT_SPI_BUS_ADDRESS": "unix:path=/nonexistent"])
        defer { publisher.stop() }
        publisher.addWindow(host: second.host, title: "second", windowPlacement: nil)
        let first = try XCTUnwrap(publisher.windowID(of: second.host))
        XCTAssertTrue(publisher.host(ofWindow: first) === second.host)
        publisher.removeWindow(host: second.host)
        XCTAssertNil(publisher.host(ofWindow: first), "a request for the window that went finds no host")
        XCTAssertEqual(AtspiUIRequest.perform(.press, element: 5).unanswered, .done(false))
        publisher.addWindow(host: second.host, title: "second again", windowPlacement: nil)
        let again = try XCTUnwrap(publisher.windowID(of: second.host))
        XCTAssertNotEqual(again, first, "a window listed again has a new id")
        XCTAssertEqual(publisher.bridge.windows.map(\.id), [0, again])
    }
}
