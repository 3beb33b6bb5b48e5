import Foundation
import Tessera
import TestSupport
import XCTest

/// A screen with one button in the middle.
private final class OneButtonNode: Node, @unchecked Sendable {
    let button = ButtonNode(title: "Press me", attributes: TextAttributes(font: .system(size: 15), color: .white))

    override init() {
        super.init()
        backgroundColor = Color(rgb: 0x202020)
        button.setBackgroundColor(Color(rgb: 0x3050D0))
        button.setBackgroundColor(Color(rgb: 0x203890), for: .highlighted)
        addSubnode(button)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        button.centered()
    }
}

/// A button in a real window under Xvfb, pressed from outside with xdotool: a click and then Space
/// (the click gave it the focus) each activate it once. The window runs in a child process of this
/// test binary (SDL's video driver is chosen once per process), which prints what happened.
@MainActor
final class ControlWindowTests: XCTestCase {
    private static let childVariable = "TESSERA_CONTROL_WINDOW_CHILD"

    func testAClickAndSpaceInAWindowActivateAButton() async throws {
        if ProcessInfo.processInfo.environment[Self.childVariable] != nil {
            try runWindow()
            return
        }
        guard let xdotool = Xvfb.which("xdotool") else {
            throw XCTSkip("xdotool is not installed (make test installs it)")
        }
        try Xvfb.withDisplay(numbers: 300..<400, screen: "640x480x24") { display in
            let child = Process()
            child.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
            child.arguments = ["TesseraTests.ControlWindowTests/testAClickAndSpaceInAWindowActivateAButton"]
            var environment = ProcessInfo.processInfo.environment
            environment["DISPLAY"] = display
            environment["SDL_VIDEODRIVER"] = "x11"
            environment[Self.childVariable] = "1"
            child.environment = environment
            let pipe = Pipe()
            child.standardOutput = pipe
            child.standardError = pipe
            try child.run()
            var output = ""
            func read(until text: String) -> Bool {
                while !output.contains(text) {
                    let data = pipe.fileHandleForReading.availableData
                    if data.isEmpty { return false }
                    output += String(decoding: data, as: UTF8.self)
                }
                return true
            }
            func xdo(_ arguments: [String]) throws {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: xdotool)
                process.arguments = arguments
                process.environment = ["DISPLAY": display]
                let errors = Pipe()
                process.standardOutput = errors
                process.standardError = errors
                try process.run()
                let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                process.waitUntilExit()
                XCTAssertEqual(process.terminationStatus, 0, "xdotool \(arguments): \(said)")
            }
            XCTAssertTrue(read(until: "button at "), output)
            let line = try XCTUnwrap(output.split(separator: "\n").first { $0.hasPrefix("button at ") })
            let numbers = line.dropFirst("button at ".count).split(separator: " ").compactMap { Double($0) }
            XCTAssertEqual(numbers.count, 2, String(line))
            let (x, y) = (String(Int(numbers[0])), String(Int(numbers[1])))
            try xdo(["search", "--sync", "--onlyvisible", "--name", "^controls$", "windowfocus", "--sync", "%1",
                     "mousemove", "--window", "%1", x, y, "click", "1"])
            XCTAssertTrue(read(until: "activated 1 focused true"), "the click: " + output)
            try xdo(["key", "space"])
            XCTAssertTrue(read(until: "activated 2 focused true"), "Space: " + output)
            output += String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            child.waitUntilExit()
            XCTAssertEqual(child.terminationStatus, 0, output)
        }
    }

    /// The child: the window, its button and the loop, until the second activation.
    private func runWindow() throws {
        let screen = OneButtonNode()
        let app = try Application(configuration: .init(title: "controls", size: Size(width: 240, height: 160), headless: false),
                                  rootNode: screen)
        XCTAssertFalse(app.isHeadless)
        var activations = 0
        let button = screen.button
        button.addTarget(for: .primaryActionTriggered) { [app] _, _ in
            activations += 1
            print("activated \(activations) focused \(app.host.focusedNode === button)")
            fflush(nil)
            if activations == 2 { app.quit() }
        }
        try app.settle()
        let origin = button.convertFromRoot(.zero)
        print("button at \(-origin.x + button.frame.width / 2) \(-origin.y + button.frame.height / 2)")
        fflush(nil)
        app.runEventLoop(forSeconds: 20)
        XCTAssertEqual(activations, 2)
    }
}
