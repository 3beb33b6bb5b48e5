import Compositor
import Foundation
import NodeRuntime
import XCTest
@testable import AccessibilityBridge

/// An indeterminate progress bar as AT-SPI reads it: BUSY.
final class AtspiBusyStateTests: XCTestCase {
    func testABusyElementHasAtspisBusyState() {
        XCTAssertEqual(AtspiState.busy.rawValue, 3, "ATSPI_STATE_BUSY")
        let bar = AccessibilityElement(id: 9, role: .progressBar, states: [.busy, .showing],
                                       frame: Rect(x: 10, y: 10, width: 200, height: 6))
        let states = AtspiStateSet(element: bar, isWindow: false, windowIsActive: true, isPlaceholder: false)
        XCTAssertTrue(states.contains(.busy))
        XCTAssertEqual(states.words[0] & (1 << 3), 1 << 3)
        let done = AccessibilityElement(id: 10, role: .progressBar, states: [.showing])
        XCTAssertFalse(AtspiStateSet(element: done, isWindow: false, windowIsActive: true, isPlaceholder: false).contains(.busy))
    }
}
