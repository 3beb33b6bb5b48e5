import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Tab bars: a click chooses a tab (`onSelect`, `.valueChanged`); one Tab stop, Left and Right move
/// the focus without choosing, Enter and Space choose; read as a page tab list of page tabs with
/// tooltips; out-of-range indexes choose nothing; drawn in each state, light and dark.
@MainActor
final class TabBarNodeTests: XCTestCase {
    override func setUp() async throws {
        Runtime.shared.setAppearance(.standard)
        Runtime.shared.setTheme(.standard)
    }

    override func tearDown() async throws {
        Runtime.shared.setAppearance(.standard)
    }

    private let size = Size(width: 320, height: 110)
    private func bar(_ selected: Int? = 0) -> TabBarNode {
        TabBarNode(items: [TabBarNode.Item(title: "Chats", shortcut: "1", displayTitle: "1  Chats"),
                           TabBarNode.Item(title: "Photos", shortcut: "2", displayTitle: "2  Photos"),
                           TabBarNode.Item(title: "Settings", shortcut: "3", displayTitle: "3  Settings")],
                   selectedIndex: selected, title: "Screens")
    }

    func testTabsShareTheWidthAndAClickChooses() async throws {
        let tabs = bar()
        let harness = try ControlHarness(tabs, size: size)
        defer { harness.tearDown() }
        XCTAssertEqual(tabs.frame, Rect(x: 10, y: 10, width: 300, height: 48))
        XCTAssertEqual(tabs.tabs.map(\.frame.width), [100, 100, 100])
        var chosen: [Int] = []
        var changes = 0
        tabs.onSelect = { chosen.append($0) }
        tabs.addTarget(for: .valueChanged) { _, _ in changes += 1 }
        harness.click(Point(x: 10 + 250, y: 34))
        XCTAssertEqual(tabs.selectedIndex, 2)
        XCTAssertEqual(chosen, [2])
        XCTAssertEqual(changes, 1)
        XCTAssertTrue(tabs.tabs[2].isSelected)
        XCTAssertFalse(tabs.tabs[0].isSelected)
        harness.click(Point(x: 10 + 250, y: 34))
        XCTAssertEqual(chosen, [2, 2], "choosing the chosen tab again is heard (a screen scrolls back)")
        harness.frame([.pointerMoved(Point(x: 315, y: 100))])
        try harness.settle()
        XCTAssertEqual(try harness.colour(14, 50), ThemeColors.standardLight[.bar], "the bar's fill")
        // The chosen tab's title is bold accent: some of its pixels are the accent colour.
        let pixels = try harness.capture()
        var accent = 0
        for y in 20..<48 { for x in 210..<310 where Color(premultipliedARGB: pixels.pixel(x: x, y: y)) == ThemeColors.standardLight[.accent] { accent += 1 } }
        XCTAssertGreaterThan(accent, 3, "the chosen title is drawn in the accent colour")
        tabs.isEnabled = false
        try harness.settle()
        harness.click(Point(x: 10 + 50, y: 34))
        XCTAssertEqual(tabs.selectedIndex, 2, "a disabled bar takes no clicks")
    }

    func testArrowsMoveTheFocusAndEnterOrSpaceChooses() async throws {
        let tabs = bar(0)
        let after = CheckboxNode(title: "After")
        let harness = try ControlHarness(ControlStackNode([tabs, after]), size: size)
        defer { harness.tearDown() }
        var chosen: [Int] = []
        tabs.onSelect = { chosen.append($0) }
        harness.keys(.tab)
        XCTAssertTrue(harness.host.focusedNode === tabs.tabs[0], "the chosen tab is the Tab stop")
        harness.keys(.right)
        XCTAssertTrue(harness.host.focusedNode === tabs.tabs[1])
        XCTAssertEqual(tabs.selectedIndex, 0, "an arrow moves the focus, not the choice")
        harness.keys(.enter)
        XCTAssertEqual(tabs.selectedIndex, 1)
        harness.keys(.right, .right)
        XCTAssertTrue(harness.host.focusedNode === tabs.tabs[0], "wraps")
        harness.keys(.left)
        XCTAssertTrue(harness.host.focusedNode === tabs.tabs[2])
        harness.keys(.space)
        XCTAssertEqual(tabs.selectedIndex, 2)
        harness.keys(.up, .down)
        XCTAssertTrue(harness.host.focusedNode === tabs.tabs[2], "Up and Down are not the bar's")
        XCTAssertEqual(chosen, [1, 2])
        harness.keys(.left)
        XCTAssertTrue(harness.host.focusedNode === tabs.tabs[1])
        harness.keys(.tab)
        XCTAssertTrue(harness.host.focusedNode === after, "one stop")
        harness.frame([.keyDown(.tab, modifiers: .shift), .keyUp(.tab, modifiers: .shift)])
        XCTAssertTrue(harness.host.focusedNode === tabs.tabs[2], "coming back, the focus lands on the chosen tab")
        harness.keys(.tab)
        XCTAssertTrue(harness.host.focusedNode === after)
        tabs.isEnabled = false
        try harness.settle()
        harness.keys(.tab)
        XCTAssertTrue(harness.host.focusedNode === after, "a disabled bar is no stop")
    }

    func testAccessibilityTooltipsAndOutOfRangeIndexes() async throws {
        let tabs = bar(1)
        let harness = try ControlHarness(tabs, size: size)
        defer { harness.tearDown() }
        let list = try XCTUnwrap(harness.host.accessibilityTree().root.children.first)
        XCTAssertEqual(list.role, .tabList)
        XCTAssertEqual(list.role.atspiRoleName, "page tab list")
        XCTAssertEqual(list.label, "Screens")
        XCTAssertEqual(list.children.map(\.role), [.tab, .tab, .tab])
        XCTAssertEqual(list.children.map(\.label), ["Chats", "Photos", "Settings"])
        XCTAssertTrue(list.children.allSatisfy { $0.states.contains(.selectable) && $0.actions == [.press] })
        XCTAssertEqual(list.children.map { $0.states.contains(.selected) }, [false, true, false])
        XCTAssertEqual(tabs.tabs.map(\.toolTip), ["Show Chats (1)", "Show Photos (2)", "Show Settings (3)"])
        XCTAssertEqual(list.children.first?.hint, "Show Chats (1)", "the tooltip is read as the hint")
        var chosen: [Int] = []
        tabs.onSelect = { chosen.append($0) }
        XCTAssertTrue(harness.host.performAccessibilityAction(.press, onElement: list.children[0].id))
        XCTAssertEqual(tabs.selectedIndex, 0)
        XCTAssertEqual(chosen, [0])
        tabs.selectedIndex = 7
        XCTAssertNil(tabs.selectedIndex)
        XCTAssertNil(TabBarNode(titles: ["A"], selectedIndex: -1).selectedIndex)
        XCTAssertNil(TabBarNode.Item(title: "A").toolTip)
        let none = try XCTUnwrap(harness.host.accessibilityTree().root.children.first)
        XCTAssertFalse(none.children.contains { $0.states.contains(.selected) })
        // Set from another thread: the tab shows it by the next frame, and nothing is sent.
        let done = expectation(description: "set")
        DispatchQueue.global().async { tabs.selectedIndex = 2; done.fulfill() }
        await fulfillment(of: [done], timeout: 5)
        try harness.settle()
        XCTAssertTrue(tabs.tabs[2].isSelected)
        XCTAssertEqual(chosen, [0])
    }

    func testATitleInANarrowTabUsesItsPadding() async throws {
        let tabs = TabBarNode(titles: ["Settings", "Notifications"], title: "Narrow")
        let harness = try ControlHarness(tabs, size: Size(width: 190, height: 80))
        defer { harness.tearDown() }
        let tab = tabs.tabs[1]
        let needed = tab.titleSize().width
        XCTAssertGreaterThan(needed + 2 * TabItemNode.padding, tab.frame.width, "narrower than the title and its padding")
        XCTAssertEqual(tab.titleNode.frame.width, min(needed, tab.frame.width), "the whole title, not cut short")
    }

    private func strip() throws -> Bitmap {
        try ControlStrip.render(rows: 1, cell: Size(width: 320, height: 68)) { _ in
            (bar(0), Point(x: 10 + 150, y: 34))
        }
    }

    func testLooksLight() async throws {
        let bitmap = try strip()
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 14, y: 50)), ThemeColors.standardLight[.bar])
        GoldenImage.assertMatches(bitmap, named: "tabbar-light", in: "NodeRuntimeTests")
    }

    func testLooksDark() async throws {
        Runtime.shared.setAppearance(Appearance(colorScheme: .dark))
        let bitmap = try strip()
        XCTAssertEqual(Color(premultipliedARGB: bitmap.pixel(x: 14, y: 50)), ThemeColors.standardDark[.bar])
        GoldenImage.assertMatches(bitmap, named: "tabbar-dark", in: "NodeRuntimeTests")
    }
}
