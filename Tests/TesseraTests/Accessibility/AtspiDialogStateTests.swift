import Compositor
import Foundation
import NodeRuntime
import XCTest
@testable import AccessibilityBridge

/// Dialogs as AT-SPI reads them: an alert or a sheet is MODAL.
final class AtspiDialogStateTests: XCTestCase {
    func testAModalElementHasAtspisModalState() {
        XCTAssertEqual(AtspiState.modal.rawValue, 16, "ATSPI_STATE_MODAL")
        let alert = AccessibilityElement(id: 7, role: .alert, label: "Sign out?", states: [.modal, .showing],
                                         frame: Rect(x: 60, y: 100, width: 360, height: 160))
        let states = AtspiStateSet(element: alert, isWindow: false, windowIsActive: true, isPlaceholder: false)
        XCTAssertTrue(states.contains(.modal))
        XCTAssertEqual(states.words[0] & (1 << 16), 1 << 16)
        let button = AccessibilityElement(id: 8, role: .button, label: "Cancel", states: [.showing],
                                          frame: Rect(x: 84, y: 200, width: 150, height: 36))
        XCTAssertFalse(AtspiStateSet(element: button, isWindow: false, windowIsActive: true, isPlaceholder: false).contains(.modal))
    }
}
