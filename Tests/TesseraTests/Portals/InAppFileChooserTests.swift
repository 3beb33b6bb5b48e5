import Foundation
@testable import Tessera
import TestSupport
import XCTest

/// The in-app file chooser an app shows when the bus has no file chooser portal: it lists the
/// folder (folders, then the files the filter lets through), shows a tapped file selected, answers
/// with the file, and puts the app's screen back; saving takes the name typed. Asserted on pixels,
/// and written to `.test-output/portals/`.
@MainActor
final class InAppFileChooserTests: XCTestCase {
    private static let outputDirectory = GoldenImage.outputDirectory.deletingLastPathComponent().appendingPathComponent("portals")

    private func makeApp(bus: PrivateBus, screen: Node) throws -> Application {
        var configuration = Application.Configuration.headless(size: Size(width: 360, height: 320))
        configuration.accessibility = false
        configuration.portalConfiguration = DesktopPortal.Configuration(environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        return try Application(configuration: configuration, rootNode: screen)
    }

    /// Runs frames until `condition` holds, at most `timeout` seconds (results arrive through the main queue).
    private func frames(until condition: () -> Bool, timeout: Double = 10, _ what: String) throws {
        let deadline = MonotonicClock.nanoseconds() + UInt64(timeout * 1e9)
        while !condition() {
            guard MonotonicClock.nanoseconds() < deadline else { throw Application.Failure("waited \(timeout) s for \(what)") }
            _ = UIWakeup.shared.wait(timeout: 0.1)
            UIWakeup.shared.reset()
            Application.current?.frame()
        }
    }

    private func origin(of node: Node) -> Point {
        let inverse = node.convertFromRoot(.zero)
        return Point(x: -inverse.x, y: -inverse.y)
    }

    private func tap(_ node: Node, in app: Application, at offset: Point? = nil) {
        let at = origin(of: node)
        let point = Point(x: at.x + (offset?.x ?? node.frame.width / 2), y: at.y + (offset?.y ?? node.frame.height / 2))
        app.frame(events: [.pointerDown(point, button: 1), .pointerUp(point, button: 1)])
    }

    private func write(_ app: Application, _ name: String) throws {
        try FileManager.default.createDirectory(at: Self.outputDirectory, withIntermediateDirectories: true)
        try app.capture().writePNG(to: Self.outputDirectory.appendingPathComponent(name).path)
    }

    private func count(_ bitmap: Bitmap, in node: Node, where test: (UInt32) -> Bool) -> Int {
        let at = origin(of: node)
        var found = 0
        for y in Int(at.y)..<Int(at.y + node.frame.height) {
            for x in Int(at.x)..<Int(at.x + node.frame.width) where test(bitmap.pixel(x: x, y: y)) { found += 1 }
        }
        return found
    }

    private static func isDark(_ pixel: UInt32) -> Bool {
        ((pixel >> 16) & 0xFF) < 0x70 && ((pixel >> 8) & 0xFF) < 0x70 && (pixel & 0xFF) < 0x70
    }

    func testWithoutAPortalTheInAppChooserListsSelectsAndAnswers() async throws {
        let bus = try PrivateBus()
        let folder = try TemporaryFolder("chooser")
        try FileManager.default.createDirectory(at: folder.url.appendingPathComponent("albums"), withIntermediateDirectories: true)
        for name in ["a.png", "c.jpg", "notes.txt", ".hidden.png"] {
            try Data([1, 2, 3]).write(to: folder.url.appendingPathComponent(name))
        }
        let screen = Node()
        screen.backgroundColor = Color(rgb: 0x40A040)
        let app = try makeApp(bus: bus, screen: screen)
        defer { app.close() }
        try app.settle()
        let results = PortalResults<Result<[URL]?, PortalError>>()
        app.chooseFiles(FileChooserOptions(title: "Attach a photo", filters: [.images], currentFolder: folder.url)) { results.take($0) }
        try frames(until: { app.presentedFileChooser?.entries != nil }, "the in-app chooser's listing")
        let chooser = try XCTUnwrap(app.presentedFileChooser)
        XCTAssertEqual(chooser.entries?.map(\.name), ["albums", "a.png", "c.jpg"], "folders first; the filter and hidden files leave the rest out")
        try app.settle()
        try write(app, "in-app-chooser.png")
        let dialog = try XCTUnwrap(chooser.node as? FileChooserNode)
        let rows = dialog.rowsNode.currentRows
        XCTAssertEqual(rows.count, 3)
        var shot = try app.capture()
        XCTAssertEqual(shot.pixel(x: 4, y: 4), Color(rgb: 0xF4F5F7).premultipliedARGB, "the dialog fills the window")
        let photo = rows[1]
        let rowPixel = Point(x: origin(of: photo).x + 4, y: origin(of: photo).y + 3)
        XCTAssertEqual(shot.pixel(x: Int(rowPixel.x), y: Int(rowPixel.y)), Color.white.premultipliedARGB, "a row at rest is white")
        XCTAssertGreaterThan(count(shot, in: photo, where: Self.isDark), 20, "the row shows its name")
        XCTAssertGreaterThan(count(shot, in: dialog.titleNode, where: Self.isDark), 50, "the title is drawn")
        let accept = dialog.acceptButton
        let acceptPixel = Point(x: origin(of: accept).x + 3, y: origin(of: accept).y + accept.frame.height / 2)
        XCTAssertEqual(shot.pixel(x: Int(acceptPixel.x), y: Int(acceptPixel.y)), Color(rgb: 0x9DB7E5).premultipliedARGB,
                       "Open is disabled while nothing is selected")

        tap(photo, in: app)
        try app.settle()
        try write(app, "in-app-chooser-selected.png")
        shot = try app.capture()
        XCTAssertEqual(chooser.selectedNames, ["a.png"])
        XCTAssertEqual(shot.pixel(x: Int(rowPixel.x), y: Int(rowPixel.y)), Color(rgb: 0x2F6FDB).premultipliedARGB, "the selected row is blue")
        XCTAssertEqual(shot.pixel(x: Int(acceptPixel.x), y: Int(acceptPixel.y)), Color(rgb: 0x2F6FDB).premultipliedARGB, "Open is enabled")

        let answered = results.expectOne("the chooser answered")
        tap(accept, in: app)
        await fulfillment(of: [answered], timeout: 5)
        XCTAssertEqual(try results.last?.get()?.map(\.lastPathComponent), ["a.png"])
        XCTAssertNil(app.presentedFileChooser)
        try app.settle()
        XCTAssertEqual(try app.capture().pixel(x: 4, y: 4), Color(rgb: 0x40A040).premultipliedARGB, "the app's screen is back")
    }

    func testTheInAppChooserSavesUnderTheNameTypedAndCancels() async throws {
        let bus = try PrivateBus()
        let folder = try TemporaryFolder("chooser-save")
        let screen = Node()
        screen.backgroundColor = Color(rgb: 0x40A040)
        let app = try makeApp(bus: bus, screen: screen)
        defer { app.close() }
        let results = PortalResults<Result<[URL]?, PortalError>>()
        app.chooseFiles(FileChooserOptions(mode: .save, suggestedName: "draft.txt", currentFolder: folder.url)) { results.take($0) }
        try frames(until: { app.presentedFileChooser?.entries != nil }, "the save dialog")
        let chooser = try XCTUnwrap(app.presentedFileChooser)
        let field = try XCTUnwrap(chooser.nameField)
        XCTAssertEqual(field.text, "draft.txt")
        try app.settle()
        try write(app, "in-app-chooser-save.png")
        let shot = try app.capture()
        XCTAssertGreaterThan(count(shot, in: field, where: Self.isDark), 20, "the name field shows the name")
        field.text = "final notes.txt"
        let saved = results.expectOne("saved")
        chooser.accept()
        await fulfillment(of: [saved], timeout: 5)
        XCTAssertEqual(try results.last?.get()?.map(\.path), [folder.url.appendingPathComponent("final notes.txt").standardizedFileURL.path])

        let cancelled = results.expectOne("cancelled")
        app.chooseFiles(FileChooserOptions(mode: .folder, currentFolder: folder.url)) { results.take($0) }
        try frames(until: { app.presentedFileChooser?.entries != nil }, "the folder dialog")
        app.frame(events: [.keyDown(.escape, modifiers: [])])
        await fulfillment(of: [cancelled], timeout: 5)
        XCTAssertEqual(try results.last?.get(), .some(nil), "Escape cancels: nil")
        XCTAssertNil(app.presentedFileChooser)
    }
}
