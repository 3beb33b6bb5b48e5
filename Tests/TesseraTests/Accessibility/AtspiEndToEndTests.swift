import Foundation
import Tessera
import TestSupport
import XCTest

/// A list row: its number, inset.
private final class CheckRowNode: Node, @unchecked Sendable {
    let label: TextNode

    init(row: Int) {
        label = TextNode("Row \(row)")
        super.init()
        addSubnode(label)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        label.inset(EdgeInsets(top: 6, left: 8, bottom: 6, right: 8))
    }
}

/// The list's rows: 200 to start with, one more for each press of the button.
@MainActor
private final class CheckRows: ListDataSource {
    var count = 200

    func numberOfRows(in list: ListNode) -> Int { count }

    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        { CheckRowNode(row: row) }
    }
}

/// The screen the screen reader reads: a heading, a count and the button that raises it (and adds a
/// row to the list), a labelled switch, a text field and a list.
private final class CheckScreen: Node, @unchecked Sendable {
    let heading = TextNode("Accessibility check", attributes: TextAttributes(font: .system(size: 20, bold: true)))
    let count = TextNode("Pressed 0 times")
    let button = ButtonNode(title: "Count", attributes: TextAttributes(font: .system(size: 15), color: .white))
    let toggle = SwitchNode(isOn: false)
    let field = EditableTextNode(text: "hello", placeholder: "Message")
    let list = ListNode()

    override init() {
        super.init()
        backgroundColor = .white
        heading.accessibilityRole = .heading
        button.setBackgroundColor(Color(rgb: 0x3050D0))
        toggle.accessibilityLabel = "Wi-Fi"
        field.preferredSize = Size(width: 240, height: 28)
        field.backgroundColor = Color(rgb: 0xF0F0F4)
        list.style.height = .points(150)
        list.style.width = .points(300)
        for node in [heading, count, button, toggle, field, list] as [Node] { addSubnode(node) }
    }

    /// Presses count, and each adds a row. - Thread: main
    @MainActor
    func connect(_ rows: CheckRows) {
        list.dataSource = rows
        list.estimatedRowHeight = 30
        var presses = 0
        button.addTarget(for: .primaryActionTriggered) { [weak self] _, _ in
            guard let self else { return }
            presses += 1
            count.attributedText = AttributedText("Pressed \(presses) \(presses == 1 ? "time" : "times")")
            rows.count += 1
            list.insertRows([rows.count - 1])
        }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 10, alignItems: .start) { [heading, count, button, toggle, field, list] }.inset(16)
    }
}

/// One of each everyday control, for the controls check.
private final class ControlsScreen: Node, @unchecked Sendable {
    let box = CheckboxNode(title: "Remember me")
    let sizes = RadioGroupNode(titles: ["Small", "Medium", "Large"], selectedIndex: 1, title: "Size")
    let span = SegmentedControlNode(titles: ["Day", "Week", "Month"], selectedIndex: 1, title: "Span")
    let volume = SliderNode(value: 40, minimumValue: 0, maximumValue: 100, stepValue: 5)
    let progress = ProgressIndicatorNode(progress: 0.3)
    let copies = StepperNode(value: 2, minimumValue: 1, maximumValue: 10, stepValue: 1)
    let search = SearchFieldNode(placeholder: "Search")

    override init() {
        super.init()
        backgroundColor = .white
        volume.accessibilityLabel = "Volume"
        volume.preferredSize = Size(width: 200, height: 28)
        progress.preferredSize = Size(width: 200, height: 8)
        copies.accessibilityLabel = "Copies"
        search.preferredSize = Size(width: 240, height: 34)
        for node in [box, sizes, span, volume, progress, copies, search] as [Node] { addSubnode(node) }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 12, alignItems: .start) { [box, sizes, span, volume, progress, copies, search] as [Node] }.inset(16)
    }
}

/// The second window of the two-window check: a count and the buttons that raise it and close the window.
private final class SecondWindowScreen: Node, @unchecked Sendable {
    let count = TextNode("Second pressed 0 times")
    let press = ButtonNode(title: "Press")
    let close = ButtonNode(title: "Close")

    override init() {
        super.init()
        backgroundColor = .white
        for node in [count, press, close] as [Node] { addSubnode(node) }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 10, alignItems: .start) { [count, press, close] }.inset(16)
    }
}

/// A screen reader's view of a Tessera app, from outside: under Xvfb and a private session bus
/// (`dbus-run-session`), `atspi_client.py` starts the accessibility bus and registry, then this test
/// binary as a windowed app, and reads and drives it with pyatspi, as Orca does: it finds the app
/// in the desktop, walks its tree (roles, names, states), presses the button and the switch through
/// their actions and sees the count, the switch's state and the list's rows change, reads, sets,
/// inserts and deletes a field's text, compares extents with the window's place as the X server
/// reports it, and follows the focus as Tab moves it.
@MainActor
final class AtspiEndToEndTests: XCTestCase {
    private static let childVariable = "TESSERA_ATSPI_CHECK_CHILD"
    static let title = "Tessera AT-SPI check"

    func testAScreenReaderReadsAndDrivesTheApp() async throws {
        if ProcessInfo.processInfo.environment[Self.childVariable] != nil {
            try runApp()
            return
        }
        try runScreenReader(test: "testAScreenReaderReadsAndDrivesTheApp", arguments: ["--title", Self.title],
                            checks: ["found the app", "tree", "button", "switch", "text", "list", "extents", "focus", "events", "menus"])
    }

    static let secondTitle = "Tessera AT-SPI second window"

    /// An app of two windows read from outside: two frames under the application, each with its
    /// title and its own elements; a button of the second window pressed through its action counts
    /// there and renames the window; another closes it, and one frame is left.
    func testAScreenReaderSeesEveryWindow() async throws {
        if ProcessInfo.processInfo.environment[Self.childVariable] != nil {
            try runTwoWindowApp()
            return
        }
        try runScreenReader(test: "testAScreenReaderSeesEveryWindow",
                            arguments: ["--title", Self.title, "--windows", "--second-title", Self.secondTitle],
                            checks: ["windows", "window trees", "window action", "window closed"])
    }

    func testAScreenReaderReadsAndDrivesTheControls() async throws {
        if ProcessInfo.processInfo.environment[Self.childVariable] != nil {
            try runControlsApp()
            return
        }
        try runScreenReader(test: "testAScreenReaderReadsAndDrivesTheControls", arguments: ["--title", Self.title, "--controls"],
                            checks: ["check box", "radio buttons", "slider", "progress bar", "spin button", "search field"])
    }

    /// The child of `testAScreenReaderReadsAndDrivesTheControls`: one of each control, until the script ends it.
    private func runControlsApp() throws {
        var configuration = Application.Configuration(title: Self.title, size: Size(width: 480, height: 480), headless: false,
                                                      resizable: false)
        configuration.accessibility = true
        let screen = ControlsScreen()
        let app = try Application(configuration: configuration, rootNode: screen)
        print("controls app running; accessibility \(String(describing: app.accessibilityBridge?.status))")
        app.runEventLoop(forSeconds: 120)
        app.close()
    }

    /// Runs `atspi_client.py` with `arguments` under Xvfb and a private session bus, with this test
    /// binary's `test` as the app (the child), and expects each of `checks` to pass.
    private func runScreenReader(test: String, arguments: [String], checks: [String]) throws {
        let python = "/usr/bin/python3"
        var missing: [String] = []
        for tool in ["dbus-run-session", "xdotool"] where Xvfb.which(tool) == nil { missing.append(tool) }
        for path in ["/usr/libexec/at-spi-bus-launcher", "/usr/libexec/at-spi2-registryd"]
            where !FileManager.default.isExecutableFile(atPath: path) { missing.append(path) }
        if !FileManager.default.isExecutableFile(atPath: python) || !Self.canImport("pyatspi", python: python) {
            missing.append("python3-pyatspi")
        }
        if !missing.isEmpty {
            throw XCTSkip("the AT-SPI end-to-end test needs \(missing.joined(separator: ", ")) (make test installs them)")
        }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("atspi_client.py")
        try Xvfb.withDisplay(numbers: 400..<500, screen: "1280x1024x24") { display in
            let client = Process()
            client.executableURL = URL(fileURLWithPath: Xvfb.which("dbus-run-session")!)
            client.arguments = ["--", python, script.path] + arguments + ["--",
                                CommandLine.arguments[0], "TesseraTests.AtspiEndToEndTests/\(test)"]
            var environment = ProcessInfo.processInfo.environment
            environment["DISPLAY"] = display
            environment["SDL_VIDEODRIVER"] = "x11"
            environment[Self.childVariable] = "1"
            for name in ["DBUS_SESSION_BUS_ADDRESS", "AT_SPI_BUS_ADDRESS", "TESSERA_NO_ACCESSIBILITY", "NO_AT_BRIDGE"] {
                environment[name] = nil
            }
            client.environment = environment
            let output = Pipe()
            client.standardOutput = output
            client.standardError = output
            try client.run()
            // The script bounds each of its waits; this bounds the whole, should it hang anyway.
            let watchdog = DispatchWorkItem { if client.isRunning { client.terminate() } }
            DispatchQueue.global().asyncAfter(deadline: .now() + 240, execute: watchdog)
            let said = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            client.waitUntilExit()
            watchdog.cancel()
            let log = said.split(separator: "\n").suffix(80).joined(separator: "\n")
            // What the screen reader found, for the test log; all the app said when a sanitizer spoke
            // in it (`make tsan` reads this log).
            print(said.split(separator: "\n").filter { $0.hasPrefix("ok ") || $0.hasPrefix("all ") }.joined(separator: "\n"))
            if said.contains("Sanitizer") { print(said) }
            XCTAssertEqual(client.terminationStatus, 0, "the screen reader's checks failed:\n\(log)")
            XCTAssertTrue(said.contains("all checks passed"), log)
            for check in checks {
                XCTAssertTrue(said.contains("ok \(check):"), "no '\(check)' check in:\n\(log)")
            }
        }
    }

    /// The child: the app in a window, until the script ends it (or two minutes pass).
    private func runApp() throws {
        var configuration = Application.Configuration(title: Self.title, size: Size(width: 480, height: 420), headless: false,
                                                      resizable: false)
        configuration.accessibility = true
        let screen = CheckScreen()
        let rows = CheckRows()
        screen.connect(rows)
        let app = try Application(configuration: configuration, rootNode: screen)
        // A menu bar whose File menu asks, with an alert, before resetting the count.
        var numbered = false
        app.host.menuBar = MenuBarNode(menus: [
            Menu("File") {
                MenuItem("Reset Count…") { [weak host = app.host] in
                    host?.presentAlert(Alert(title: "Reset the count?", buttons: [.cancel("Cancel"), .destructive("Reset") {
                        screen.count.attributedText = AttributedText("Pressed 0 times")
                    }]))
                }
                MenuItem("Show Row Numbers", checked: numbered) { numbered.toggle() }
            },
            Menu("Help") { MenuItem("About") {} },
        ])
        print("app running; accessibility \(String(describing: app.accessibilityBridge?.status))")
        app.runEventLoop(forSeconds: 120)
        app.close()
    }

    /// The child of `testAScreenReaderSeesEveryWindow`: a main window and a second one whose
    /// "Press" counts and renames it and whose "Close" closes it, until the script ends it.
    private func runTwoWindowApp() throws {
        var configuration = Application.Configuration(title: Self.title, size: Size(width: 400, height: 300), headless: false,
                                                      resizable: false)
        configuration.accessibility = true
        let main = TextNode("Main screen")
        let app = try Application(configuration: configuration, rootNode: main)
        let screen = SecondWindowScreen()
        let second = try app.openWindow(configuration: .init(title: Self.secondTitle, size: Size(width: 320, height: 200)),
                                        rootController: NodeController(node: screen))
        var presses = 0
        screen.press.addTarget(for: .primaryActionTriggered) { [weak second] _, _ in
            presses += 1
            screen.count.attributedText = AttributedText("Second pressed \(presses) \(presses == 1 ? "time" : "times")")
            second?.setTitle("\(Self.secondTitle) (\(presses))")
        }
        screen.close.addTarget(for: .primaryActionTriggered) { [weak second] _, _ in second?.close() }
        print("app of two windows running; accessibility \(String(describing: app.accessibilityBridge?.status))")
        app.runEventLoop(forSeconds: 120)
        app.close()
    }

    private static func canImport(_ module: String, python: String) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", "import \(module)"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
