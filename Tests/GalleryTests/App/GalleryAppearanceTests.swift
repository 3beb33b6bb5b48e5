import Compositor
import Tessera
import Foundation
import NodeRuntime
import TestSupport
import XCTest
@testable import gallery

/// The gallery in the desktop's other appearances: each screen in dark (and the chats in high
/// contrast and at a larger text scale) against its golden, and a gallery that turns dark while it
/// runs looking exactly like one that started dark, then light again like the light golden.
@MainActor
final class GalleryAppearanceTests: XCTestCase {
    private var assets: URL { GoldenImage.repositoryRoot.appendingPathComponent("Assets") }

    private func makeApp(screen: GalleryOptions.Screen) throws -> GalleryApp {
        var options = GalleryOptions()
        options.screen = screen
        options.rows = 300
        options.headless = true
        options.size = Size(width: 640, height: 480)
        let data = try ChatData(assets: assets)
        var configuration = Application.Configuration(title: "gallery-test", size: options.size, headless: true,
                                                      backgroundColor: Color(rgb: 0x12161B))
        configuration.followsSystemAppearance = false
        configuration.accessibility = false
        let application = try Application(configuration: configuration, rootController: nil)
        return try GalleryApp(options: options, data: data, application: application)
    }

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
            Runtime.shared.setAppearance(.standard)
        }
    }

    private func assertScreen(_ screen: GalleryOptions.Screen, in appearance: Appearance, golden: String,
                              file: StaticString = #filePath, line: UInt = #line) throws {
        Runtime.shared.setAppearance(appearance)
        let app = try makeApp(screen: screen)
        defer { app.host.setRootController(nil) }
        try app.settle()
        GoldenImage.assertMatches(OffscreenRender.capture(app.host), named: golden, in: "GalleryTests", tolerance: 6,
                                  file: file, line: line)
    }

    func testEachScreenInDarkMatchesItsGolden() async throws {
        for screen in [GalleryOptions.Screen.chats, .thread, .photos, .text, .settings] {
            try assertScreen(screen, in: Appearance(colorScheme: .dark), golden: "screen-\(screen.rawValue)-dark")
        }
    }

    func testHighContrastAndLargerTextMatchTheirGoldens() async throws {
        try assertScreen(.chats, in: Appearance(colorScheme: .dark, contrast: .high), golden: "screen-chats-dark-high-contrast")
        try assertScreen(.thread, in: Appearance(contrast: .high), golden: "screen-thread-high-contrast")
        try assertScreen(.chats, in: Appearance(textScale: 1.5), golden: "screen-chats-text-scale-1.5")
    }

    /// A larger text scale while running lays every screen out again as a gallery started at that
    /// scale does: the same pixels, row heights and label places included (the settings' rows and
    /// buttons, inside a scroll, too).
    func testALargerTextScaleWhileRunningMatchesAGalleryStartedAtIt() async throws {
        for screen in [GalleryOptions.Screen.settings, .chats] {
            Runtime.shared.setAppearance(Appearance(textScale: 1.3))
            let started = try makeApp(screen: screen)
            try started.settle()
            let expected = try XCTUnwrap(OffscreenRender.capture(started.host))
            started.host.setRootController(nil)
            Runtime.shared.setAppearance(.standard)
            let app = try makeApp(screen: screen)
            defer { app.host.setRootController(nil) }
            try app.settle()
            Runtime.shared.setAppearance(Appearance(textScale: 1.3))
            try app.settle()
            let live = try XCTUnwrap(OffscreenRender.capture(app.host))
            let differing = (0..<live.height).reduce(0) { count, y in
                count + (0..<live.width).filter { live.pixel(x: $0, y: y) != expected.pixel(x: $0, y: y) }.count
            }
            if differing > 0 {
                try? live.writePNG(to: GoldenImage.outputDirectory.appendingPathComponent("text-scale-live-\(screen.rawValue).png").path)
                try? expected.writePNG(to: GoldenImage.outputDirectory.appendingPathComponent("text-scale-started-\(screen.rawValue).png").path)
            }
            XCTAssertEqual(differing, 0, "\(screen.rawValue): the live change shows what a start at 1.3 shows")
            Runtime.shared.setAppearance(.standard)
        }
    }

    /// Dark while running: the rows on screen draw again in place (not made again), and the screen
    /// is the one a gallery started in dark shows; light again is the light golden.
    func testTheGalleryTurnsDarkWhileRunning() async throws {
        let app = try makeApp(screen: .chats)
        defer { app.host.setRootController(nil) }
        try app.settle()
        let light = try XCTUnwrap(OffscreenRender.capture(app.host))
        GoldenImage.assertMatches(light, named: "screen-chats", in: "GalleryTests", tolerance: 6)
        let list = app.chats.list
        let rows = (list.visibleRows.map(Array.init) ?? []).compactMap { list.nodeForRow($0) }
        XCTAssertGreaterThan(rows.count, 4)
        let draws = Runtime.shared.counters.displaysStarted.load(ordering: .relaxed)

        Runtime.shared.setAppearance(Appearance(colorScheme: .dark))
        try app.settle()
        let dark = try XCTUnwrap(OffscreenRender.capture(app.host))
        GoldenImage.assertMatches(dark, named: "screen-chats-dark", in: "GalleryTests", tolerance: 6)
        let rowsAfter = (list.visibleRows.map(Array.init) ?? []).compactMap { list.nodeForRow($0) }
        XCTAssertEqual(rowsAfter.map(ObjectIdentifier.init), rows.map(ObjectIdentifier.init), "the same rows, drawn again")
        let redrawn = Runtime.shared.counters.displaysStarted.load(ordering: .relaxed) - draws
        // Each row is one rasterized bitmap; the tab bar and its labels, the search field: a few dozen
        // draws, not the hundreds a rebuilt screen would start.
        XCTAssertGreaterThan(redrawn, rows.count - 1)
        XCTAssertLessThan(redrawn, 60, "only what depends on colours drew again")

        Runtime.shared.setAppearance(.standard)
        try app.settle()
        GoldenImage.assertMatches(OffscreenRender.capture(app.host), named: "screen-chats", in: "GalleryTests", tolerance: 6)
    }
}
