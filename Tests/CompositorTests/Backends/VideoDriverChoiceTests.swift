import Foundation
import XCTest
@testable import Compositor

/// The video driver a window starts SDL with: Wayland where a compositor with a seat is named (X11
/// the fallback), the user's `SDL_VIDEODRIVER` as asked, and never SDL's Wayland driver on a
/// compositor without a seat (SDL 2.26 crashes there): X11 instead, or an error without X11.
/// The compositor is asked only when its answer matters.
@MainActor
final class VideoDriverChoiceTests: XCTestCase {
    /// The choice for `environment` with a compositor that has `seats` seats, and whether it was asked.
    private func choice(_ environment: [String: String], seats: Int, input: Bool = true) -> (VideoDriverChoice, asked: Bool) {
        var asked = false
        let made = VideoDriverChoice.make(environment: environment, seats: {
            asked = true
            return .init(count: seats, hasKeyboardOrPointer: input)
        })
        return (made, asked)
    }

    func testAWaylandCompositorWithASeatIsPreferredOverX11() async {
        let (both, asked) = choice(["WAYLAND_DISPLAY": "wayland-1", "DISPLAY": ":0"], seats: 1)
        XCTAssertTrue(asked)
        XCTAssertEqual(both, VideoDriverChoice(driver: "wayland", fallback: "x11"))
        XCTAssertEqual(choice(["WAYLAND_DISPLAY": "wayland-1"], seats: 2).0, VideoDriverChoice(driver: "wayland"))
    }

    func testNoCompositorNamedOrNoneAnsweringLeavesSDLsOrder() async {
        let (none, asked) = choice(["DISPLAY": ":0"], seats: 1)
        XCTAssertEqual(none, VideoDriverChoice())
        XCTAssertFalse(asked, "no compositor is asked when none is named")
        XCTAssertEqual(choice(["WAYLAND_DISPLAY": "", "DISPLAY": ":0"], seats: 1).0, VideoDriverChoice())
        XCTAssertEqual(choice(["WAYLAND_DISPLAY": "wayland-9", "DISPLAY": ":0"], seats: -1).0, VideoDriverChoice())
        XCTAssertEqual(choice(["WAYLAND_DISPLAY": "wayland-9"], seats: -2).0, VideoDriverChoice())
    }

    func testTheUsersDriverWins() async {
        for asked in ["x11", "dummy", "X11", "kmsdrm,x11"] {
            let (made, probed) = choice(["SDL_VIDEODRIVER": asked, "WAYLAND_DISPLAY": "wayland-1", "DISPLAY": ":0"], seats: 1)
            XCTAssertEqual(made, VideoDriverChoice(), asked)
            XCTAssertFalse(probed, "\(asked): the compositor is not asked")
        }
        XCTAssertEqual(choice(["SDL_VIDEODRIVER": "wayland", "WAYLAND_DISPLAY": "wayland-1"], seats: 1).0, VideoDriverChoice())
    }

    func testASeatlessCompositorIsNeverHandedToSDL() async {
        // Found by itself: X11 where there is one, said once.
        let x11 = choice(["WAYLAND_DISPLAY": "wayland-1", "DISPLAY": ":5"], seats: 0).0
        XCTAssertEqual(x11.driver, "x11")
        XCTAssertNil(x11.failure)
        XCTAssertTrue(x11.notice?.contains("offers no seat") == true, x11.notice ?? "no notice")
        XCTAssertTrue(x11.notice?.contains("DISPLAY=:5") == true, x11.notice ?? "no notice")
        // Asked for by the user: the same, since SDL would crash.
        XCTAssertEqual(choice(["SDL_VIDEODRIVER": "wayland", "WAYLAND_DISPLAY": "w", "DISPLAY": ":5"], seats: 0).0.driver, "x11")
        // No X11: an error the window throws, not a crash.
        let none = choice(["WAYLAND_DISPLAY": "wayland-1"], seats: 0).0
        XCTAssertNil(none.driver)
        XCTAssertTrue(none.failure?.contains("no seat") == true, none.failure ?? "no failure")
        XCTAssertTrue(choice(["SDL_VIDEODRIVER": "wayland"], seats: 0).0.failure?.contains("wayland-0") == true,
                      "SDL's default socket is named")
    }

    func testTheSeatCountWithoutACompositorIsNoAnswer() async throws {
        // A socket name no compositor listens on: libwayland-client is installed with SDL, so -1.
        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-no-wayland-\(getpid())")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: runtime) }
        XCTAssertEqual(VideoDriverChoice.waylandSeats(display: runtime.appendingPathComponent("none").path).count, -1)
    }

    func testASeatWithoutKeyboardOrPointerOpensWithoutInputAndSaysSo() async {
        let found = choice(["WAYLAND_DISPLAY": "wayland-1", "DISPLAY": ":0"], seats: 1, input: false).0
        XCTAssertEqual(found.driver, "wayland")
        XCTAssertNil(found.notice, "nothing said before SDL's Wayland driver has started")
        XCTAssertTrue(found.inputNotice?.contains("no keyboard and no pointer") == true, found.inputNotice ?? "no notice")
        let asked = choice(["SDL_VIDEODRIVER": "wayland", "WAYLAND_DISPLAY": "wayland-1"], seats: 1, input: false).0
        XCTAssertNil(asked.driver)
        XCTAssertTrue(asked.inputNotice?.contains("without input") == true, asked.inputNotice ?? "no notice")
        let devices = choice(["WAYLAND_DISPLAY": "wayland-1"], seats: 1, input: true).0
        XCTAssertNil(devices.notice ?? devices.inputNotice, "a seat with devices: nothing said")
    }
}
