import Foundation
import Tessera
import TestSupport
import XCTest
@testable import NodeRuntime

/// A screen of two coloured boxes and a field.
private final class IdleScreenNode: Node, @unchecked Sendable {
    let box = Node()
    let field = EditableTextNode(attributes: TextAttributes(font: .system(size: 15)), placeholder: "Message")

    override init() {
        super.init()
        backgroundColor = Color(rgb: 0x202020)
        box.backgroundColor = Color(rgb: 0x3050D0)
        box.preferredSize = Size(width: 80, height: 80)
        addSubnode(box)
        addSubnode(field)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 10, alignItems: .start) { box; field.flexShrink(0) }.inset(EdgeInsets(all: 10))
    }
}

/// The event loop at rest: no frames, no presents and no wakes while nothing changes; a change from
/// another thread wakes it and reaches the screen; the focused field's caret is the only timer.
@MainActor
final class IdleLoopTests: XCTestCase {
    private func makeApp() throws -> (Application, IdleScreenNode) {
        let screen = IdleScreenNode()
        let app = try Application(configuration: .headless(size: Size(width: 200, height: 160)), rootNode: screen)
        try app.settle()
        return (app, screen)
    }

    func testAnAppAtRestRunsNoFramesPresentsNothingAndIsNotWoken() async throws {
        let (app, _) = try makeApp()
        defer { app.host.setRootController(nil) }
        XCTAssertFalse(app.host.needsFrame, "settled: \(app.host.pendingWork)")
        XCTAssertNil(app.host.nextTimerTime(after: app.host.time), "nothing focused, no timer")
        let frames = app.frameCount, presents = app.compositor.presentCount, wakes = UIWakeup.shared.wakeCount
        app.runEventLoop(forSeconds: 0.6)
        XCTAssertEqual(app.frameCount, frames, "no frame ran at rest")
        XCTAssertEqual(app.compositor.presentCount, presents, "nothing presented at rest")
        XCTAssertEqual(UIWakeup.shared.wakeCount, wakes, "nothing woke the loop")
    }

    func testAFrameWithNothingChangedDrawsAndPresentsNothing() async throws {
        let (app, screen) = try makeApp()
        defer { app.host.setRootController(nil) }
        let presents = app.compositor.presentCount
        let record = app.frame(events: [])
        XCTAssertFalse(record.compositor.presented)
        XCTAssertEqual(app.compositor.presentCount, presents)
        // A layer that changes is drawn and presented at the next frame.
        screen.box.backgroundColor = Color(rgb: 0xD03030)
        XCTAssertTrue(app.host.needsFrame)
        XCTAssertTrue(app.frame(events: []).compositor.presented)
        XCTAssertEqual(app.compositor.presentCount, presents + 1)
        XCTAssertEqual(Color(premultipliedARGB: try app.capture().pixel(x: 50, y: 50)), Color(rgb: 0xD03030))
    }

    func testAChangeFromAnotherThreadWakesTheLoopAndReachesTheScreen() async throws {
        let (app, screen) = try makeApp()
        defer { app.host.setRootController(nil) }
        let red = Color(rgb: 0xD03030)
        let wakes = UIWakeup.shared.wakeCount
        app.onFrame = { [app] _ in
            if (try? app.capture()).map({ Color(premultipliedARGB: $0.pixel(x: 50, y: 50)) }) == red { app.quit() }
        }
        let box = screen.box
        DispatchQueue.global().async { box.backgroundColor = red }
        // The loop ends when the frame shows red; the time limit only bounds a failure.
        app.runEventLoop(forSeconds: 20)
        XCTAssertTrue(app.isQuitting, "the change reached the screen")
        XCTAssertGreaterThan(UIWakeup.shared.wakeCount, wakes, "the write from the worker woke the loop")
        XCTAssertEqual(Color(premultipliedARGB: try app.capture().pixel(x: 50, y: 50)), red)
    }

    func testTheFocusedFieldsCaretIsTheOnlyTimerAndBlinksWithoutRedrawing() async throws {
        let (app, screen) = try makeApp()
        defer { app.host.setRootController(nil) }
        app.host.focus(screen.field)
        try app.settle()
        let time = app.host.time
        let next = try XCTUnwrap(app.host.nextTimerTime(after: time), "a focused field's caret blinks")
        XCTAssertGreaterThan(next, time)
        XCTAssertLessThanOrEqual(next, time + 0.5)
        let draws = Runtime.shared.scheduler.statistics.byKind[.draw]?.completed ?? 0
        let frames = app.frameCount, presents = app.compositor.presentCount
        app.runEventLoop(forSeconds: 1.6)
        // The caret turns off and on every half second after its first solid half second: a frame and a
        // present for each change, no more, and no text drawn again.
        XCTAssertGreaterThanOrEqual(app.compositor.presentCount - presents, 2)
        XCTAssertLessThanOrEqual(app.compositor.presentCount - presents, 4)
        XCTAssertLessThanOrEqual(app.frameCount - frames, 8)
        XCTAssertEqual(Runtime.shared.scheduler.statistics.byKind[.draw]?.completed ?? 0, draws, "the caret is a layer shown and hidden")
        app.host.focus(nil)
        XCTAssertNil(app.host.nextTimerTime(after: app.host.time))
    }

    /// The caret blinks for `caretBlinkTimeout` after it last moved, then stays on and asks for no
    /// frame: an app left with a field focused is at rest. Typing starts the blink again.
    func testTheCaretStopsBlinkingAfterTheTimeoutAndTheFocusedFieldRests() async throws {
        let (app, screen) = try makeApp()
        defer { app.host.setRootController(nil) }
        let timeout = try XCTUnwrap(EditableTextNode.caretBlinkTimeout)
        // Well into the host's time line: the blink counts from the focus, not from the start.
        for _ in 0..<Int(timeout * 60) + 120 { app.frame() }
        app.host.focus(screen.field)
        try app.settle()
        let focused = app.host.time
        XCTAssertNotNil(app.host.nextTimerTime(after: focused), "blinking once focused")
        // Frames through the blink, each at the time the field asks for: on and off, then on for good.
        var changes = 0, time = focused, last = true
        while let next = app.host.nextTimerTime(after: time) {
            XCTAssertLessThanOrEqual(next, focused + timeout + 1e-6, "no timer past the timeout")
            time = next
            app.host.runFrame(time: time, events: [])
            if screen.field.isCaretShown != last { changes += 1; last = screen.field.isCaretShown }
            if changes > 100 { break }
        }
        XCTAssertGreaterThanOrEqual(changes, Int(timeout) * 2 - 2, "it blinked, on and off each second")
        XCTAssertTrue(screen.field.isCaretShown, "the caret stays on after the blink")
        XCTAssertNil(app.host.nextTimerTime(after: time + 100), "no frame asked for at rest with the field focused")
        // Typing moves the caret: the blink starts again.
        app.host.runFrame(time: time + 1, events: [.textInput("a")])
        XCTAssertNotNil(app.host.nextTimerTime(after: app.host.time), "a keystroke starts the blink again")
        app.host.focus(nil)
    }
}
