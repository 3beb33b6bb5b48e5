import Compositor
import Tessera
import Foundation
import NodeRuntime
import TestSupport
import XCTest
@testable import gallery

/// The gallery as a person uses it: each screen rendered headless and compared with its golden, and
/// clicks and keys sent through the event path.
@MainActor
final class GalleryTests: XCTestCase {
    private var time = 0.0
    private var assets: URL { GoldenImage.repositoryRoot.appendingPathComponent("Assets") }

    private func makeApp(screen: GalleryOptions.Screen, rows: Int = 300) throws -> GalleryApp {
        var options = GalleryOptions()
        options.screen = screen
        options.rows = rows
        options.headless = true
        options.size = Size(width: 640, height: 480)
        let data = try ChatData(assets: assets)
        let application = try Application(configuration: .init(title: "gallery-test", size: options.size, headless: true,
                                                                      backgroundColor: Color(rgb: 0x12161B)),
                                          rootController: nil)
        return try GalleryApp(options: options, data: data, application: application)
    }

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
            Runtime.shared.forcesSynchronousDisplay = false
        }
    }

    private func frames(_ app: GalleryApp, _ events: [InputEvent] = [], count: Int = 1) {
        for index in 0..<count {
            time += 1.0 / 60
            app.frame(time: time, events: index == 0 ? events : [])
        }
    }

    private func click(_ app: GalleryApp, at point: Point) {
        frames(app, [.pointerDown(point, button: 1)])
        frames(app, [.pointerUp(point, button: 1)])
    }

    func testEachScreenMatchesItsGolden() async throws {
        for screen in GalleryOptions.Screen.allCases {
            let app = try makeApp(screen: screen)
            try app.settle()
            let pixels = OffscreenRender.capture(app.host)
            GoldenImage.assertMatches(pixels, named: "screen-\(screen.rawValue)", in: "GalleryTests", tolerance: 6)
            app.host.setRootController(nil)
        }
    }

    /// The end of the Text screen: emoji, Chinese and Japanese through font fallback, right-to-left text
    /// with numbers and a URL, and a long URL broken after its slashes.
    func testTheTextScreensLastSamplesMatchTheirGolden() async throws {
        let app = try makeApp(screen: .text)
        try app.settle()
        // End scrolls to where the estimated rows end; once they are measured, End again lands on the
        // real end (the animation takes well under 60 frames of 1/60 s).
        for _ in 0..<3 {
            frames(app, [.keyDown(.end, modifiers: [])], count: 90)
            try app.settle()
        }
        let pixels = OffscreenRender.capture(app.host)
        GoldenImage.assertMatches(pixels, named: "screen-text-end", in: "GalleryTests", tolerance: 6)
        app.host.setRootController(nil)
    }

    func testClicksAndKeysDriveTheScreens() async throws {
        let app = try makeApp(screen: .chats)
        try app.settle()
        XCTAssertEqual(app.tabs.selectedIndex, 0)

        // Open the second chat: its thread is pushed on the navigation stack.
        let chats = try XCTUnwrap(app.chatsNavigation.topController as? ChatsController)
        let chatsOrigin = chats.list.convertFromRoot(.zero)
        click(app, at: Point(x: 300, y: -chatsOrigin.y + chats.list.frameOfRow(1).midY - chats.list.contentOffset))
        frames(app, count: 30)
        XCTAssertEqual(app.chatsNavigation.viewControllers.count, 2)
        let thread = try XCTUnwrap(app.chatsNavigation.topController as? ThreadController)
        XCTAssertEqual(thread.chat.id, app.data.chat(forRow: 1).id)
        XCTAssertTrue(thread.list.stacksFromBottom)
        XCTAssertEqual(thread.navigationBar.title, thread.chat.title, "the navigation bar shows the chat's title")
        XCTAssertTrue(thread.navigationBar.showsBackButton, "and a back button to the list")
        let rowPoint = Point(x: 300, y: -chatsOrigin.y + chats.list.frameOfRow(1).midY - chats.list.contentOffset)

        // Alt+Left goes back; so does the bar's back button.
        frames(app, [.keyDown(.left, modifiers: .alt)], count: 30)
        XCTAssertEqual(app.chatsNavigation.viewControllers.count, 1)
        click(app, at: rowPoint)
        frames(app, count: 30)
        let reopened = try XCTUnwrap(app.chatsNavigation.topController as? ThreadController)
        let barOrigin = reopened.navigationBar.convertFromRoot(.zero)
        click(app, at: Point(x: -barOrigin.x + 30, y: -barOrigin.y + NavigationBarNode.height / 2))
        frames(app, count: 30)
        XCTAssertEqual(app.chatsNavigation.viewControllers.count, 1, "the back button pops")
        click(app, at: rowPoint)
        frames(app, count: 30)
        XCTAssertEqual(app.chatsNavigation.viewControllers.count, 2)

        // Escape goes back.
        frames(app, [.keyDown(.escape, modifiers: [])], count: 30)
        XCTAssertEqual(app.chatsNavigation.viewControllers.count, 1)

        // Keys 1–5 and the tab bar switch screens.
        frames(app, [.keyDown(.character("3"), modifiers: [])])
        XCTAssertEqual(app.tabs.selectedIndex, 2)
        XCTAssertEqual(app.tabBar.selectedIndex, 2)
        click(app, at: Point(x: 640 * 7 / 10, y: 480 - 24))
        XCTAssertEqual(app.tabs.selectedIndex, 3, "the fourth tab button selects the text screen")

        // Reveal a spoiler on the text screen by clicking on it.
        let text = try XCTUnwrap(app.tabs.selectedController as? TextShowcaseController)
        try app.settle()
        let spoilerRow = try XCTUnwrap(text.spoilerRow)
        text.list.scroll(to: spoilerRow, at: .top, animated: false)
        try app.settle()
        let sampleNode = try XCTUnwrap(text.list.nodeForRow(spoilerRow) as? TextSampleNode)
        let spoilerRect = try XCTUnwrap(firstSpoilerRect(in: sampleNode.sample))
        let listOrigin = text.list.frameOfRow(spoilerRow).origin
        let contentOffset = text.list.contentOffset
        let point = Point(x: sampleNode.sample.frame.minX + spoilerRect.midX,
                          y: app.host.contentBounds.minY + listOrigin.y - contentOffset + sampleNode.sample.frame.minY + spoilerRect.midY)
        XCTAssertTrue(sampleNode.sample.revealedSpoilers.isEmpty)
        click(app, at: point)
        XCTAssertFalse(sampleNode.sample.revealedSpoilers.isEmpty, "clicking the veil reveals the spoiler")
    }

    /// Where the first spoiler of `node` is, found through the node's own hit testing.
    private func firstSpoilerRect(in node: TextNode) -> Rect? {
        firstHit(in: node) { if case .spoiler = $0 { return true } else { return false } }?.rects.first
    }

    /// A point of `node` where its hit test reports a target `matching` accepts, and that hit.
    private func firstHit(in node: TextNode, matching: (TextHit.Target) -> Bool) -> TextHit? {
        let size = node.frame.size
        for y in stride(from: 1.0, to: size.height, by: 3) {
            for x in stride(from: 1.0, to: size.width, by: 3) {
                if let hit = node.textHit(at: Point(x: x, y: y)), matching(hit.target) { return hit }
            }
        }
        return nil
    }

    /// A click on the collapsed quote expands it in place: the row grows to show every line (the text
    /// measured again off the UI thread), the screen shows it, and a second click collapses it.
    func testClickingACollapsedQuoteExpandsAndCollapsesIt() async throws {
        let app = try makeApp(screen: .text)
        try app.settle()
        let text = try XCTUnwrap(app.tabs.selectedController as? TextShowcaseController)
        let row = try XCTUnwrap(text.collapsedQuoteRow)
        text.list.scroll(to: row, at: .top, animated: false)
        try app.settle()
        let sampleNode = try XCTUnwrap(text.list.nodeForRow(row) as? TextSampleNode)
        let collapsedHeight = text.list.frameOfRow(row).height
        func clickBlock() throws {
            let hit = try XCTUnwrap(firstHit(in: sampleNode.sample) { if case .block = $0 { return true } else { return false } })
            let area = try XCTUnwrap(hit.rects.first)
            let origin = text.list.frameOfRow(row).origin
            click(app, at: Point(x: sampleNode.sample.frame.minX + area.midX,
                                 y: app.host.contentBounds.minY + origin.y - text.list.contentOffset + sampleNode.sample.frame.minY + area.midY))
            try app.settle()
        }
        // A settled screen measures no row again by itself (no layout hook keeps invalidating).
        let remeasured = text.list.statistics.rowsRemeasured
        frames(app, count: 30)
        XCTAssertEqual(text.list.statistics.rowsRemeasured, remeasured)
        try clickBlock()
        XCTAssertEqual(text.list.statistics.rowsRemeasured, remeasured + 1, "the click measures its row again")
        let expandedHeight = text.list.frameOfRow(row).height
        XCTAssertGreaterThan(expandedHeight, collapsedHeight + 30, "the quote shows its hidden lines")
        let pixels = try XCTUnwrap(OffscreenRender.capture(app.host))
        GoldenImage.assertMatches(pixels, named: "screen-text-quote-expanded", in: "GalleryTests", tolerance: 6)
        try clickBlock()
        XCTAssertEqual(text.list.frameOfRow(row).height, collapsedHeight, accuracy: 0.5, "a second click collapses it")
        app.host.setRootController(nil)
    }

    /// Typing in the Chats screen's search field filters the rows as you type (ignoring case and
    /// accents); clearing it brings every row back.
    func testTheSearchFieldFiltersChatsAsYouType() async throws {
        let app = try makeApp(screen: .chats)
        try app.settle()
        let chats = try XCTUnwrap(app.chatsNavigation.topController as? ChatsController)
        let field = chats.searchField
        let origin = field.convertFromRoot(.zero)
        click(app, at: Point(x: -origin.x + 30, y: -origin.y + field.bounds.height / 2))
        XCTAssertTrue(app.host.focusedNode === field)
        let all = chats.list.numberOfRows
        for character in "laura" { frames(app, [.textInput(String(character))]) }
        try app.settle()
        XCTAssertEqual(field.text, "laura")
        let shown = chats.list.numberOfRows
        XCTAssertGreaterThan(shown, 0)
        XCTAssertLessThan(shown, all)
        for row in 0..<shown {
            let chat = app.data.chat(forRow: chats.dataRow(row))
            let text = (chat.title + " " + (chat.messages.last?.text ?? "")).folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil)
            XCTAssertTrue(text.contains("laura"), "row \(row) matches: \(chat.title)")
        }
        let pixels = try XCTUnwrap(OffscreenRender.capture(app.host))
        GoldenImage.assertMatches(pixels, named: "screen-chats-search", in: "GalleryTests", tolerance: 6)
        frames(app, [.keyDown(.character("a"), modifiers: .control)])
        frames(app, [.keyDown(.backspace, modifiers: [])])
        try app.settle()
        XCTAssertEqual(chats.list.numberOfRows, all, "an empty search shows every chat")
        app.host.setRootController(nil)
    }

    func testScrollingUpTheThreadLoadsOlderMessagesWithoutMovingTheScreen() async throws {
        let app = try makeApp(screen: .thread)
        try app.settle()
        let thread = try XCTUnwrap(app.tabs.selectedController as? ThreadController)
        let older = thread.olderItemCount
        let rows = thread.list.numberOfRows
        try XCTSkipIf(older == 0, "the first thread is shorter than one batch")
        XCTAssertEqual(rows, ThreadController.firstBatch)
        // Up to the first row shown: within a screen of the top, the next batch comes in above it.
        thread.list.scroll(to: 0, at: .top, animated: false)
        try app.settle()
        let loaded = min(older, ThreadController.olderBatch)
        XCTAssertEqual(thread.list.numberOfRows, rows + loaded)
        XCTAssertEqual(thread.olderItemCount, older - loaded)
        let firstShown = try XCTUnwrap(thread.list.nodeForRow(loaded)?.layerIfLoaded?.frameInRoot)
        // Another frame changes nothing: the row the user was at stays put.
        try app.settle()
        XCTAssertEqual(try XCTUnwrap(thread.list.nodeForRow(loaded)?.layerIfLoaded?.frameInRoot).minY, firstShown.minY, accuracy: 0.01)
        XCTAssertGreaterThan(thread.list.contentOffset, 0, "the older rows are above the screen")
        app.host.setRootController(nil)
    }

    func testTheSettingsScreensSwitchesAndButtonsWorkByPointerAndKeys() async throws {
        let app = try makeApp(screen: .settings)
        try app.settle()
        let screen = app.settings.screen
        XCTAssertFalse(screen.sounds.isOn)
        func centre(_ node: Node) -> Point {
            let origin = node.convertFromRoot(.zero)
            return Point(x: -origin.x + node.frame.width / 2, y: -origin.y + node.frame.height / 2)
        }
        click(app, at: centre(screen.sounds))
        try app.settle()
        XCTAssertTrue(screen.sounds.isOn, "a click flips the switch")
        let pixels = try XCTUnwrap(OffscreenRender.capture(app.host))
        let thumb = centre(screen.sounds.thumb)
        XCTAssertEqual(Color(premultipliedARGB: pixels.pixel(x: Int(thumb.x), y: Int(thumb.y))), .white, "its thumb")
        XCTAssertGreaterThan(thumb.x, centre(screen.sounds).x, "at the right end")
        // Tab goes on from the focused switch to the text size slider: Right makes the text 110%, Left
        // brings it back.
        frames(app, [.keyDown(.tab, modifiers: [])])
        XCTAssertTrue(app.host.focusedNode === screen.content.textSize)
        frames(app, [.keyDown(.right, modifiers: [])])
        XCTAssertEqual(Runtime.shared.appearance.textScale, 1.1, accuracy: 0.001, "the slider sets the text scale")
        frames(app, [.keyDown(.left, modifiers: [])])
        XCTAssertEqual(Runtime.shared.appearance.textScale, 1, accuracy: 0.001)
        try app.settle()
        // Tab goes on to the button; Space presses it; the disabled one is skipped.
        frames(app, [.keyDown(.tab, modifiers: [])])
        XCTAssertTrue(app.host.focusedNode === screen.clearCache)
        frames(app, [.keyDown(.space, modifiers: [])])
        XCTAssertEqual(ImageCache.shared.byteCount, 0, "the button cleared the image cache")
        // Sign out asks first: an alert takes the focus; Escape cancels it and the focus comes back.
        frames(app, [.keyDown(.tab, modifiers: [])])
        XCTAssertTrue(app.host.focusedNode === screen.signOut)
        frames(app, [.keyDown(.space, modifiers: [])])
        try app.settle()
        XCTAssertEqual(app.host.overlays.count, 1)
        let alert = try XCTUnwrap(app.host.accessibilityTree().root.allElements.first { $0.role == .alert })
        XCTAssertEqual(alert.label, "Sign out?")
        let shot = try XCTUnwrap(OffscreenRender.capture(app.host))
        try? shot.writePNG(to: GoldenImage.outputDirectory.deletingLastPathComponent().appendingPathComponent("sign-out-alert.png").path)
        XCTAssertNotEqual(Color(premultipliedARGB: shot.pixel(x: 5, y: 100)), Color(premultipliedARGB: pixels.pixel(x: 5, y: 100)),
                          "the window behind the alert is dimmed")
        frames(app, [.keyDown(.escape, modifiers: [])])
        XCTAssertTrue(app.host.overlays.isEmpty)
        XCTAssertTrue(app.host.focusedNode === screen.signOut, "the focus came back")
        app.host.setRootController(nil)
    }

    /// The settings are longer than the window: the wheel scrolls them (a scroll node) to the last
    /// row, which then shows above the tab bar.
    func testTheSettingsScrollByTheWheelToTheirLastRow() async throws {
        let app = try makeApp(screen: .settings)
        try app.settle()
        let screen = app.settings.screen
        let last = try XCTUnwrap(screen.content.chatRows.last)
        let viewport = app.host.viewportSize
        func bottomOfLast() -> Double { -last.convertFromRoot(.zero).y + last.frame.height }
        XCTAssertGreaterThan(bottomOfLast(), viewport.height, "the last row starts below the window")
        frames(app, [.pointerMoved(Point(x: viewport.width / 2, y: viewport.height / 2))])
        for _ in 0..<40 { frames(app, [.wheel(dx: 0, dy: -1)]) }
        try app.settle()
        XCTAssertGreaterThan(screen.contentOffset.y, 0)
        XCTAssertEqual(screen.contentOffset.y + screen.bounds.height, screen.contentSize.height, accuracy: 0.5,
                       "scrolled to the end")
        XCTAssertLessThanOrEqual(bottomOfLast(), viewport.height - 48 + 0.5, "the last row shows above the tab bar")
        let pixels = try XCTUnwrap(OffscreenRender.capture(app.host))
        let toggle = try XCTUnwrap(last.control as? SwitchNode)
        let origin = toggle.convertFromRoot(.zero)
        let track = pixels.pixel(x: Int(-origin.x + 6), y: Int(-origin.y + toggle.frame.height / 2))
        XCTAssertNotEqual(Color(premultipliedARGB: track), Color(rgb: 0xF1F3F5), "its switch is drawn there")
        // The sticker below them plays now that it is on screen, and "Auto-play stickers" pauses it.
        let sticker = screen.content.sticker
        XCTAssertTrue(sticker.isAnimating, "the sticker plays on screen")
        let first = sticker.animationStatus?.frameIndex
        frames(app, count: 12)
        try app.settle()
        XCTAssertNotEqual(sticker.animationStatus?.frameIndex, first, "its frames move on")
        let autoPlay = screen.content.autoPlayStickers
        autoPlay.isOn = false
        autoPlay.sendActions(for: .valueChanged)
        XCTAssertTrue(sticker.isAnimationPaused)
        XCTAssertFalse(sticker.isAnimating)
        app.host.setRootController(nil)
    }

    /// Where `node`'s top-left corner is in the window.
    private func windowOrigin(of node: Node) -> Point {
        let local = node.convertFromRoot(.zero)
        return Point(x: -local.x, y: -local.y)
    }

    func testPhotosAreAGridUnderAStripOfStoriesAndOpenInAPager() async throws {
        let app = try makeApp(screen: .photos)
        try app.settle()
        let photos = app.photos
        let screen = photos.screen
        XCTAssertEqual(screen.grid.list.numberOfRows, 60, "three photos a line")
        XCTAssertGreaterThan(screen.stories.numberOfItems, 5)
        // The strip scrolls sideways under the wheel; the grid does not move.
        let strip = windowOrigin(of: screen.stories)
        frames(app, [.pointerMoved(Point(x: strip.x + 200, y: strip.y + 40)), .wheel(dx: 0, dy: -1)])
        try app.settle()
        XCTAssertGreaterThan(screen.stories.list.contentOffset, 0)
        XCTAssertEqual(screen.grid.list.contentOffset, 0)
        // A click on the second photo opens it; the pager shows it letterboxed in black.
        let tile = try XCTUnwrap(screen.grid.frameOfItem(1))
        let gridOrigin = windowOrigin(of: screen.grid)
        click(app, at: Point(x: gridOrigin.x + tile.midX, y: gridOrigin.y + tile.midY))
        try app.settle()
        XCTAssertEqual(photos.openedPhoto, 1)
        let pager = try XCTUnwrap(screen.pager)
        XCTAssertEqual(pager.frame, screen.bounds)
        XCTAssertEqual((pager.nodeForPage(1) as? ImageNode)?.source, .file(photos.paths[1]))
        var pixels = try XCTUnwrap(OffscreenRender.capture(app.host))
        let pagerOrigin = windowOrigin(of: pager)
        let middle = Point(x: pagerOrigin.x + pager.bounds.width / 2, y: pagerOrigin.y + pager.bounds.height / 2)
        // The photos are square: fitted to the pager's height, they leave black bands at the sides.
        XCTAssertEqual(pixels.pixel(x: Int(pagerOrigin.x) + 10, y: Int(middle.y)), 0xFF00_0000, "the letterbox")
        let shown = pixels.pixel(x: Int(middle.x), y: Int(middle.y))
        XCTAssertNotEqual(shown, 0xFF00_0000, "the photo")
        GoldenImage.assertMatches(pixels, named: "screen-photos-pager", in: "GalleryTests", tolerance: 6)
        // → turns to the next photo, which the pixels show.
        frames(app, [.keyDown(.right, modifiers: [])])
        try app.settle()
        XCTAssertEqual(photos.openedPhoto, 2)
        XCTAssertEqual(pager.contentOffset, 2 * pager.bounds.width)
        pixels = try XCTUnwrap(OffscreenRender.capture(app.host))
        XCTAssertNotEqual(pixels.pixel(x: Int(middle.x), y: Int(middle.y)), shown, "another photo")
        // Escape closes it and the grid shows again.
        frames(app, [.keyDown(.escape, modifiers: [])])
        try app.settle()
        XCTAssertNil(screen.pager)
        XCTAssertNil(pager.supernode)
        pixels = try XCTUnwrap(OffscreenRender.capture(app.host))
        XCTAssertNotEqual(pixels.pixel(x: Int(pagerOrigin.x) + 10, y: Int(middle.y)), 0xFF00_0000, "the grid again")
        app.host.setRootController(nil)
    }

    func testEveryScreenIsReadableAndOperableWithoutThePointer() async throws {
        let app = try makeApp(screen: .chats)
        try app.settle()
        var tree = app.host.accessibilityTree(title: "gallery")
        let all = tree.root.allElements
        // The tabs: a tab list of five, Chats selected.
        let tabList = try XCTUnwrap(tree.root.first { $0.role == .tabList })
        XCTAssertEqual(tabList.children.map(\.label), ["Chats", "Thread", "Photos", "Text", "Settings"])
        XCTAssertEqual(tabList.children.map { $0.states.contains(.selected) }, [true, false, false, false, false])
        // The chat list: every row counted, each row one item read as a sentence.
        let list = try XCTUnwrap(all.first { $0.role == .list && $0.rowCount == 300 })
        let first = try XCTUnwrap(list.children.first)
        let chat = app.data.chat(forRow: 0)
        XCTAssertEqual(first.role, .listItem)
        XCTAssertEqual(first.rowIndex, 0)
        XCTAssertTrue(first.label.hasPrefix(chat.title + ", "), first.label)
        if chat.unread > 0 { XCTAssertTrue(first.label.contains("\(chat.unread) unread"), first.label) }
        XCTAssertTrue(first.label.contains("last message"), first.label)
        XCTAssertEqual(first.actions, [.press])
        // The search field is a text field called by its placeholder.
        XCTAssertNotNil(all.first { $0.role == .textField })

        // Keyboard only: Tab walks the controls and rows with a ring drawn around the focused one;
        // Enter on a row opens its chat.
        var focusedRow: Node?
        for _ in 0..<12 {
            frames(app, [.keyDown(.tab, modifiers: [])])
            if let focused = app.host.focusedNode, focused is ChatRowNode { focusedRow = focused; break }
        }
        let row = try XCTUnwrap(focusedRow, "Tab reaches the chat rows")
        try app.settle()
        XCTAssertTrue(app.host.showsFocusRing)
        let pixels = try XCTUnwrap(OffscreenRender.capture(app.host))
        try? FileManager.default.createDirectory(atPath: ".test-output", withIntermediateDirectories: true)
        try pixels.writePNG(to: ".test-output/gallery-focus-ring.png")
        let rowFrame = try XCTUnwrap(row.layerIfLoaded?.frameInRoot)
        let ringY = Int(rowFrame.minY - 2), ringX = Int(rowFrame.midX)
        XCTAssertEqual(Color(premultipliedARGB: pixels.pixel(x: ringX, y: ringY)), app.host.focusRingColor,
                       "the ring is drawn above the focused row")
        tree = app.host.accessibilityTree()
        XCTAssertEqual(tree.focusedID, row.accessibilityIdentifier)
        let depth = app.chatsNavigation.viewControllers.count
        frames(app, [.keyDown(.enter, modifiers: [])])
        try app.settle()
        XCTAssertEqual(app.chatsNavigation.viewControllers.count, depth + 1, "Enter opened the chat")
        // A click hides the ring.
        click(app, at: Point(x: 5, y: 5))
        try app.settle()
        XCTAssertFalse(app.host.showsFocusRing)
        app.host.setRootController(nil)

        // The thread: messages read as sentences; the composer is a text field called "Message".
        let thread = try makeApp(screen: .thread)
        try thread.settle()
        let threadElements = thread.host.accessibilityTree().root.allElements
        let message = try XCTUnwrap(threadElements.first { $0.role == .listItem && $0.label.contains(", ") })
        XCTAssertFalse(message.label.isEmpty)
        XCTAssertTrue(threadElements.contains { $0.role == .textField && $0.label == "Message" })
        thread.host.setRootController(nil)

        // Settings: each switch is called by its row's title, which is not read twice.
        let settings = try makeApp(screen: .settings)
        try settings.settle()
        let settingsElements = settings.host.accessibilityTree().root.allElements
        let switches = settingsElements.filter { $0.role == .switch }
        XCTAssertGreaterThanOrEqual(switches.count, 3)
        XCTAssertFalse(switches.contains { $0.label.isEmpty })
        XCTAssertFalse(settingsElements.contains { $0.role == .staticText && $0.label == switches[0].label })
        XCTAssertTrue(settingsElements.contains { $0.role == .button && $0.label == "Sign out" && !$0.states.contains(.disabled) })
        settings.host.setRootController(nil)

        // Photos: every tile and story has a name.
        let photos = try makeApp(screen: .photos)
        try photos.settle()
        let photoElements = photos.host.accessibilityTree().root.allElements
        let images = photoElements.filter { $0.role == .image }
        XCTAssertFalse(images.isEmpty)
        XCTAssertTrue(images.allSatisfy { $0.label.hasPrefix("Photo: ") }, images.map(\.label).joined(separator: "; "))
        XCTAssertTrue(photoElements.contains { $0.role == .button && $0.label.hasPrefix("Story: ") })
        photos.host.setRootController(nil)
    }

    func testF2TogglesThePerfOverlayThatReadsTheFrameRecords() async throws {
        let app = try makeApp(screen: .chats)
        try app.settle()
        frames(app, [.keyDown(.function(2), modifiers: [])], count: 20)
        XCTAssertTrue(app.overlayShown)
        let overlayLayer = try XCTUnwrap(app.overlay.layerIfLoaded)
        XCTAssertTrue(overlayLayer.superlayer === app.host.rootLayer)
        // The graphs show the history as it was at their last refresh (a few times a second).
        let shownFrames = app.overlay.chart.parameters.frames.count
        XCTAssertGreaterThan(shownFrames, 0)
        XCTAssertLessThanOrEqual(shownFrames, min(240, app.history.frameCount))
        XCTAssertEqual(app.overlay.chart.parameters.workerMilliseconds.count, shownFrames)
        XCTAssertTrue(app.overlay.figures.attributedText.string.contains("main thread p50"))
        XCTAssertTrue(app.overlay.figures.attributedText.string.hasPrefix("4 Hz refresh"), "the overlay says how often it changes")

        // A second of scrolling, frames back to back as in the real loop with no waiting for the display
        // workers: the graphs refresh four times a second, not every frame, and their drawn contents
        // still reach the screen.
        let refreshes = app.overlay.refreshCount
        frames(app, [.pointerMoved(Point(x: 200, y: 300))])
        for _ in 0..<60 { frames(app, [.wheel(dx: 0, dy: -1)]) }
        XCTAssertGreaterThanOrEqual(app.overlay.refreshCount - refreshes, 3)
        XCTAssertLessThanOrEqual(app.overlay.refreshCount - refreshes, 5)
        // The last refresh's chart drawn and committed (the overlay holds still while settling, then
        // shows the history as it is). The test's frames go on from the settled host's time.
        try app.settle()
        time = app.host.time
        let pixels = try XCTUnwrap(OffscreenRender.capture(app.host))
        try? pixels.writePNG(to: GoldenImage.outputDirectory.appendingPathComponent("overlay.png").path)
        XCTAssertEqual(app.overlay.frame, PerfOverlayNode.frame(in: app.host.viewportSize))
        ChartPixels.assertChartDrawn(in: pixels, viewport: app.host.viewportSize, minimumBars: 20, "F2 overlay")
        // The graphs' rectangles leave out the legend, whose squares have the phase colours too; finding
        // those squares shows that the colour matching works on this screenshot.
        let legendFrame = app.overlay.legend.frame.offsetBy(dx: app.overlay.frame.minX, dy: app.overlay.frame.minY)
        let legend = ChartPixels(in: pixels, rect: legendFrame, colors: PerfOverlayNode.ChartNode.phaseColors)
        XCTAssertGreaterThanOrEqual(legend.columns, PerfOverlayNode.ChartNode.phaseColors.count, "legend: \(legend)")

        // The figures say where the UI thread's time went, from the same records: its CPU time per
        // frame and the interference (wall minus CPU). A frame a second later refreshes them from the
        // history as it then is.
        time += 1
        frames(app)
        let figures = app.overlay.figures.attributedText.string
        let cpu = app.history.percentiles(\.cpuMilliseconds)
        let interference = app.history.percentiles(\.interferenceMilliseconds)
        XCTAssertTrue(figures.contains(String(format: "UI thread CPU p50 %.2f  p99 %.2f ms", cpu.median, cpu.percentile(0.99))), figures)
        XCTAssertTrue(figures.contains(String(format: "interference p50 %.2f  p99 %.2f  max %.2f ms", interference.median,
                                              interference.percentile(0.99), interference.maximum)), figures)
        XCTAssertTrue(figures.contains(PerfOverlayNode.threadTimeFigures(app.history)), figures)
        XCTAssertGreaterThan(cpu.median, 0, "every frame of the chats screen costs the UI thread CPU time")
        XCTAssertEqual(cpu.count, min(240, app.history.frameCount))
        for record in app.history.records {
            XCTAssertLessThanOrEqual(record.cpuMilliseconds, record.wallMilliseconds + 0.05, "CPU time lies inside the wall time")
            XCTAssertEqual(record.interferenceMilliseconds, max(0, record.wallMilliseconds - record.cpuMilliseconds))
        }

        frames(app, [.keyDown(.function(2), modifiers: [])])
        XCTAssertFalse(app.overlayShown)
        XCTAssertNil(overlayLayer.superlayer)
    }

    func testWorkerTimeIsTheSchedulersTotalDiffedPerReading() async {
        var meter = WorkerTimeMeter()
        var statistics = DisplayScheduler.Statistics()
        statistics.total.workMillisecondsCompleted = 40
        XCTAssertEqual(meter.millisecondsSinceLastReading(statistics), 0, "the first reading only takes the start")
        statistics.total.workMillisecondsCompleted = 43
        statistics.total.workMillisecondsCancelled = 2
        XCTAssertEqual(meter.millisecondsSinceLastReading(statistics), 5, "completed and cancelled work both count")
        XCTAssertEqual(meter.millisecondsSinceLastReading(statistics), 0)
        statistics = DisplayScheduler.Statistics()
        statistics.total.workMillisecondsCompleted = 1.5
        XCTAssertEqual(meter.millisecondsSinceLastReading(statistics), 1.5, "after a reset the new total counts")
    }

    func testSerializeDisplayFlagSerializesTheDisplayWorkers() async throws {
        XCTAssertTrue(Gallery.helpMessage().contains("--serialize-display"))
        let policyBefore = Runtime.shared.scheduler.workerPolicy
        defer { Runtime.shared.scheduler.workerPolicy = policyBefore }
        let before = Runtime.shared.scheduler.serializesAllDrawing
        try Gallery.parse([]).applyDebugSwitches()
        XCTAssertEqual(Runtime.shared.scheduler.serializesAllDrawing, before, "without the flag nothing changes")
        let serialized = try Gallery.parse(["--serialize-display"])
        XCTAssertTrue(serialized.serializeDisplay)
        serialized.applyDebugSwitches()
        defer { Runtime.shared.scheduler.serializesAllDrawing = before }
        XCTAssertTrue(Runtime.shared.scheduler.serializesAllDrawing)
    }

    /// The gallery keeps a core for its UI thread unless told otherwise.
    func testTheWorkerPolicyOptionSetsTheSchedulersPolicy() async throws {
        let before = Runtime.shared.scheduler.workerPolicy
        defer { Runtime.shared.scheduler.workerPolicy = before }
        try Gallery.parse([]).applyDebugSwitches()
        XCTAssertEqual(Runtime.shared.scheduler.workerPolicy, .keepingACoreForTheUIThread)
        XCTAssertEqual(Runtime.shared.scheduler.workerPolicy.maximumActiveWorkers,
                       max(1, ProcessInfo.processInfo.activeProcessorCount / 2))
        try Gallery.parse(["--worker-policy", "all"]).applyDebugSwitches()
        XCTAssertEqual(Runtime.shared.scheduler.workerPolicy, .default)
        try Gallery.parse(["--worker-policy", "idle"]).applyDebugSwitches()
        XCTAssertEqual(Runtime.shared.scheduler.workerPolicy.priority, .idle)
        XCTAssertThrowsError(try Gallery.parse(["--worker-policy", "fast"]))
    }

    func testCompactCountsAndTimes() async {
        XCTAssertEqual(Format.compactCount(7), "7")
        XCTAssertEqual(Format.compactCount(999), "999")
        XCTAssertEqual(Format.compactCount(4_051), "4K")
        XCTAssertEqual(Format.compactCount(4_551), "4.5K")
        XCTAssertEqual(Format.compactCount(12_400), "12K")
        XCTAssertEqual(Format.compactCount(1_250_000), "1.2M")
        XCTAssertEqual(Format.compactCount(-3), "0")
        XCTAssertEqual(Format.clockTime("2026-11-14T04:35"), "04:35")
    }

    func testAMissingOrBrokenDatasetIsOneClearError() async throws {
        let folder = GoldenImage.repositoryRoot.appendingPathComponent(".test-output/broken-assets")
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("data"), withIntermediateDirectories: true)
        XCTAssertThrowsError(try ChatData(assets: folder)) { XCTAssertTrue("\($0)".contains("chats.json")) }
        try Data("{\"version\": 1, \"chats\": [{\"id\": \"x\"}]}".utf8).write(to: folder.appendingPathComponent("data/chats.json"))
        XCTAssertThrowsError(try ChatData(assets: folder)) { XCTAssertTrue("\($0)".contains("not valid")) }
    }

    // MARK: Menus and dialogs

    /// The window's menu bar (File, Edit, View, Help) opens by F10, runs its shortcuts, and screen
    /// readers see it; a right click on a message opens Reply, Copy, Delete; Delete asks first and then
    /// takes the message out of the thread.
    func testTheMenuBarAndAMessagesContextMenu() async throws {
        let app = try makeApp(screen: .thread)
        try app.settle()
        let bar = try XCTUnwrap(app.host.menuBar)
        XCTAssertEqual(bar.menus.map(\.title), ["File", "Edit", "View", "Help"])
        XCTAssertEqual(app.host.contentBounds.minY, MenuBarNode.height, "the screens start below the bar")
        let barElement = try XCTUnwrap(app.host.accessibilityTree().root.allElements.first { $0.role == .menuBar })
        XCTAssertEqual(barElement.children.map(\.label), ["File", "Edit", "View", "Help"])
        frames(app, [.keyDown(.function(10), modifiers: [])])
        XCTAssertEqual(app.host.overlays.count, 1, "F10 opens the first menu")
        frames(app, [.keyDown(.escape, modifiers: [])])
        XCTAssertTrue(app.host.overlays.isEmpty)
        frames(app, [.keyDown(.function(2), modifiers: [])])
        XCTAssertTrue(app.overlayShown, "F2, View › Performance Overlay's shortcut, shows the overlay")
        frames(app, [.keyDown(.function(2), modifiers: [])])

        let thread = try XCTUnwrap(app.tabs.selectedController as? ThreadController)
        let rows = thread.list.numberOfRows
        let visible = try XCTUnwrap(thread.list.visibleRows)
        let row = try XCTUnwrap(visible.reversed().first { row in
            if case .message = thread.items[row] { return true } else { return false }
        })
        guard case let .message(message, _, _) = thread.items[row] else { return XCTFail("not a message") }
        let origin = thread.list.convertFromRoot(.zero)
        let point = Point(x: -origin.x + thread.list.frame.width / 2,
                          y: -origin.y + thread.list.frameOfRow(row).midY - thread.list.contentOffset)
        frames(app, [.pointerDown(point, button: 3)])
        frames(app, [.pointerUp(point, button: 3)])
        try app.settle()
        XCTAssertEqual(app.host.overlays.count, 1, "a right click opens the message's menu")
        let menu = try XCTUnwrap(app.host.accessibilityTree().root.allElements.first { $0.role == .menu })
        XCTAssertEqual(menu.children.filter { $0.role == .menuItem }.map(\.label), ["Reply", "Copy", "Delete…"])
        // End highlights the last item; Enter chooses it (each key pressed and released, as from a keyboard).
        frames(app, [.keyDown(.end, modifiers: []), .keyUp(.end, modifiers: [])])
        frames(app, [.keyDown(.enter, modifiers: [])])
        frames(app, [.keyUp(.enter, modifiers: [])])
        try app.settle()
        let tree = app.host.accessibilityTree()
        let alert = try XCTUnwrap(tree.root.allElements.first { $0.role == .alert })
        XCTAssertEqual(alert.label, "Delete message?")
        let delete = try XCTUnwrap(alert.allElements.first { $0.role == .button && $0.label == "Delete" })
        XCTAssertTrue(app.host.performAccessibilityAction(.press, onElement: delete.id))
        try app.settle()
        XCTAssertTrue(app.host.overlays.isEmpty)
        XCTAssertEqual(thread.list.numberOfRows, rows - 1)
        XCTAssertFalse(thread.items.contains { if case let .message(other, _, _) = $0 { return other.id == message.id } else { return false } })
        app.host.setRootController(nil)
    }
}
