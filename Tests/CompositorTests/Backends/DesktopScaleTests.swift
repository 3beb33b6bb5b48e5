import Compositor
import XCTest

/// What a desktop's settings make of a window's scale on X11: `GDK_SCALE`, then
/// `Xft.dpi` over 96, on a grid of eighths between 1 and 8, and nothing from a value that is no scale.
final class DesktopScaleTests: XCTestCase {
    private func scale(_ environment: [String: String] = [:], _ resources: String? = nil) -> Double? {
        DesktopScale.resolve(environment: environment, resources: resources)?.scale
    }

    func testXftDPIGivesTheFractionalScalesDesktopsOffer() {
        XCTAssertEqual(scale([:], "Xft.dpi:\t120\n"), 1.25)
        XCTAssertEqual(scale([:], "Xft.dpi:\t144\n"), 1.5)
        XCTAssertEqual(scale([:], "Xft.dpi:\t168\n"), 1.75)
        XCTAssertEqual(scale([:], "Xft.dpi: 192"), 2)
        XCTAssertEqual(scale([:], "Xft.antialias:\t1\nXft.dpi:\t288\nXft.hinting:\t1\n"), 3)
        // Between the steps: the nearest eighth.
        XCTAssertEqual(scale([:], "Xft.dpi: 110"), 1.125)
        XCTAssertEqual(scale([:], "Xft.dpi: 143.5"), 1.5)
        let described = DesktopScale.resolve(environment: [:], resources: "Xft.dpi:\t144\n")
        XCTAssertEqual(described?.source, .xftDPI(144))
        XCTAssertEqual(described?.description, "1.5 from Xft.dpi 144")
    }

    func testNinetySixDPIOrLessAsksForNothing() {
        XCTAssertNil(scale([:], "Xft.dpi: 96"))
        XCTAssertNil(scale([:], "Xft.dpi: 90"), "a little under 96 is 1")
        XCTAssertNil(scale([:], "Xft.dpi: 48"), "never below 1")
        XCTAssertNil(scale([:], nil))
        XCTAssertNil(scale([:], ""))
        XCTAssertNil(scale([:], "Xcursor.size: 48\n*background: grey"))
    }

    func testUnreadableValuesAreIgnoredNeverGuessedAt() {
        for value in ["", "abc", "144dpi", "-144", "0", "nan", "inf", "-inf", "1e400", "\u{FFFD}", "144 144"] {
            XCTAssertNil(scale([:], "Xft.dpi: \(value)"), "Xft.dpi: \(value)")
        }
        XCTAssertNil(scale([:], "Xft.dpi"), "no colon")
        XCTAssertNil(scale([:], ": 144"), "no name")
        XCTAssertNil(scale([:], "Xft.dpix: 144"), "another name")
        XCTAssertEqual(scale([:], "Xft.dpi: 1000000"), 8, "an absurd DPI is held to the largest scale")
        // A value that is no scale leaves the one before it.
        XCTAssertEqual(scale([:], "Xft.dpi: 144\nXft.dpi: garbage\n"), 1.5)
        // The last line that names it wins, as in Xlib; CR LF line ends and spaces are read.
        XCTAssertEqual(scale([:], "Xft.dpi: 120\r\n  Xft.dpi  :  192  \r\n"), 2)
        XCTAssertEqual(scale([:], "Xft*dpi: 144"), 1.5)
        XCTAssertEqual(scale([:], String(repeating: "x", count: 100_000) + "\nXft.dpi: 144"), 1.5)
    }

    func testGDKScaleComesBeforeXftDPIAsInGTK() {
        XCTAssertEqual(scale(["GDK_SCALE": "2"], "Xft.dpi: 144"), 2)
        XCTAssertEqual(scale(["GDK_SCALE": "3"]), 3)
        XCTAssertEqual(DesktopScale.resolve(environment: ["GDK_SCALE": "2"], resources: nil)?.description, "2 from GDK_SCALE")
        // GTK takes whole numbers only: anything else leaves Xft.dpi to say.
        for value in ["1.5", "0", "-2", "9", "two", "", "nan"] {
            XCTAssertEqual(scale(["GDK_SCALE": value], "Xft.dpi: 144"), 1.5, "GDK_SCALE=\(value)")
        }
        XCTAssertNil(scale(["GDK_SCALE": "1"], "Xft.dpi: 144"), "GDK_SCALE=1 says 1, whatever Xft.dpi says")
    }

    /// Under SDL's dummy driver (no X11) the desktop's scale is not read: a window is 1×.
    func testAHeadlessWindowIgnoresTheDesktopScale() throws {
        setenv("GDK_SCALE", "2", 1)
        defer { unsetenv("GDK_SCALE") }
        let window = try SDLWindow(.init(size: Size(width: 40, height: 30), headless: true))
        XCTAssertNil(window.desktopScale)
        XCTAssertEqual(window.scale, 1)
    }
}
