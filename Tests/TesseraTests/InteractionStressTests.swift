import Dispatch
import Foundation
import TestSupport
import TesseraRandom
import XCTest
@testable import Compositor
@testable import NodeRuntime

/// A block of colour. - Thread: any
private final class Swatch: Node, @unchecked Sendable {
    init(_ color: UInt32, width: Double = 60, height: Double = 36) {
        super.init()
        backgroundColor = Color(rgb: color)
        preferredSize = Size(width: width, height: height)
    }
}

/// Rows of colours; some rows are scrollers of their own. - Thread: main
@MainActor
private final class Rows: ListDataSource {
    let count: Int
    let special: [Int: @Sendable () -> Node]
    let width: Double
    init(count: Int, width: Double, special: [Int: @Sendable () -> Node] = [:]) {
        self.count = count
        self.width = width
        self.special = special
    }
    func numberOfRows(in list: ListNode) -> Int { count }
    func nodeBlockForRow(at row: Int, in list: ListNode) -> ListNode.RowNodeBlock {
        if let special = special[row] { return special }
        let color = UInt32(truncatingIfNeeded: (row &* 0x9E3779B1) & 0xFFFFFF)
        let width = self.width
        return { Swatch(color, width: width, height: 36) }
    }
}

/// The interaction scene: a feed (a vertical list) holding a horizontal list and a paging carousel,
/// a scroll node beside it, and an overlay over the feed's top that takes the pointer and comes and
/// goes. - Thread: any
private final class InteractionScene: Node, @unchecked Sendable {
    let feed = ListNode()
    let side: ScrollNode
    let overlay = Swatch(0x3050C0, width: 180, height: 40)
    let shelf = Locked<ListNode?>(nil)
    let carousel = Locked<ScrollNode?>(nil)

    override init() {
        let column = Node()
        for index in 0..<30 {
            let block = Swatch(UInt32(0x202020 + index * 0x070503), width: 80, height: 40)
            block.frame = Rect(x: 0, y: Double(index) * 40, width: 80, height: 40)
            column.addSubnode(block)
        }
        column.preferredSize = Size(width: 80, height: 1_200)
        side = ScrollNode(content: column)
        super.init()
        overlay.isUserInteractionEnabled = true
        addSubnode(feed)
        addSubnode(side)
        addSubnode(overlay)
    }

    override func layout() {
        super.layout()
        feed.frame = Rect(x: 0, y: 0, width: 180, height: bounds.height)
        side.frame = Rect(x: 180, y: 0, width: bounds.width - 180, height: bounds.height)
        overlay.frame = Rect(x: 0, y: 0, width: 180, height: 40)
    }
}

/// The seeded interaction model across the compositor thread: one input thread (this one, as the
/// window system) sends random wheel turns (notches and touchpad fractions, both axes), presses,
/// drags and releases, pointer moves, over a feed with a horizontal list and a paging carousel
/// inside, a scroll node beside it and an overlay that takes the pointer (shown and hidden at
/// random); the UI thread scrolls from code (offsets, animated scrolls, flings) and stalls (no frames
/// for a while, as slow app code would) between its frames. After quiescence: the screen the
/// compositor thread drew equals a synchronous render of the UI thread's layers, and every scroll
/// offset the UI thread holds is the one on screen. A seed replays the operations (the interleaving
/// with the compositor thread is the machine's); it is printed with every run.
@MainActor
final class InteractionStressTests: XCTestCase {
    private var sources: [Rows] = []

    private func seed() -> UInt64 {
        let environment = ProcessInfo.processInfo.environment
        return environment["TESSERA_STRESS_SEED"].flatMap { UInt64($0.replacingOccurrences(of: "0x", with: ""), radix: 16) }
            ?? UInt64.random(in: 0...UInt64.max)
    }

    private var operations: Int {
        ProcessInfo.processInfo.environment["TESSERA_STRESS_OPERATIONS"].flatMap(Int.init) ?? 4_000
    }

    func testRandomInteractionAcrossTheCompositorThread() async throws {
        let seed = seed()
        let operations = operations
        let size = Size(width: 260, height: 300)
        let thread = try CompositorThread(backend: .init(title: "interaction", size: size, scale: 1, headless: true),
                                          compositor: .init(clearColor: Color(rgb: 0x101010)))
        defer { thread.stop() }
        let compositor = Compositor(thread: thread, configuration: .init(clearColor: Color(rgb: 0x101010)))
        let host = NodeHost(compositor: compositor)
        host.measuresLayoutInBackground = false
        let scene = InteractionScene()
        let shelfBox = scene.shelf, carouselBox = scene.carousel
        let feedRows = Rows(count: 300, width: 180, special: [
            3: {
                let shelf = ListNode(scrollDirection: .horizontal, pages: false)
                shelf.preferredSize = Size(width: 180, height: 60)
                let replaced = shelfBox.withLock { box -> ListNode? in defer { box = shelf }; return box }
                withExtendedLifetime(replaced) {}
                return shelf
            },
            8: {
                let pages = Node()
                for index in 0..<4 {
                    let page = Swatch(UInt32(0x804020 + index * 0x103050), width: 180, height: 60)
                    page.frame = Rect(x: Double(index) * 180, y: 0, width: 180, height: 60)
                    pages.addSubnode(page)
                }
                pages.preferredSize = Size(width: 720, height: 60)
                let carousel = ScrollNode(content: pages)
                carousel.axes = .horizontal
                carousel.isPagingEnabled = true
                carousel.showsScrollIndicators = false
                carousel.preferredSize = Size(width: 180, height: 60)
                // The one it replaces (a row made again) goes after the lock.
                let replaced = carouselBox.withLock { box -> ScrollNode? in defer { box = carousel }; return box }
                withExtendedLifetime(replaced) {}
                return carousel
            },
        ])
        scene.side.showsScrollIndicators = false
        sources = [feedRows]
        scene.feed.dataSource = feedRows
        host.setRootNode(scene)

        var wheels = 0, movedByCompositor = 0
        func frame() {
            let events = compositor.pollEvents()
            let times = compositor.lastEventTimes, updates = compositor.lastScrollUpdates
            wheels += events.filter { if case .wheel = $0 { true } else { false } }.count
            movedByCompositor += updates.compactMap { $0 }.count
            host.runFrame(time: thread.now, events: events, eventTimes: times.count == events.count ? times : nil,
                          scrollUpdates: updates.count == events.count ? updates : nil)
        }
        func push(_ event: InputEvent) { CompositorThreadSupport.push([event], to: thread) }
        for _ in 0..<30 { frame() }
        // The shelf's rows, once the feed made it.
        if let shelf = shelfBox.withLock({ $0 }) {
            let shelfRows = Rows(count: 40, width: 70)
            sources.append(shelfRows)
            shelf.dataSource = shelfRows
        }

        var random = SeededRandom(seed: seed)
        var pointer = Point(x: 90, y: 150)
        var buttonDown = false
        var stall = 0
        let start = Date()
        for _ in 0..<operations {
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<15:
                pointer = Point(x: Double.random(in: 1..<259, using: &random), y: Double.random(in: 1..<299, using: &random))
                push(.pointerMoved(pointer))
            case 15..<45:
                let notch = [-1.0, 1.0, -0.5, 0.5, -2.0, 2.0].randomElement(using: &random)!
                let sideways = Int.random(in: 0..<5, using: &random) == 0
                push(.wheel(dx: sideways ? notch : 0, dy: sideways ? 0 : notch))
            case 45..<52:
                if buttonDown {
                    push(.pointerUp(pointer, button: 1))
                } else {
                    push(.pointerDown(pointer, button: 1, clicks: 1))
                }
                buttonDown.toggle()
            case 52..<56:
                // The overlay comes and goes (the UI thread's doing).
                scene.overlay.isHidden.toggle()
            case 56..<62:
                switch Int.random(in: 0..<5, using: &random) {
                case 0: scene.feed.setContentOffset(Double.random(in: 0..<4_000, using: &random), animated: false)
                case 1: scene.feed.setContentOffset(Double.random(in: 0..<4_000, using: &random), animated: true)
                case 2: scene.feed.fling(velocity: Double.random(in: -3_000..<3_000, using: &random))
                case 3: scene.side.setContentOffset(Point(x: 0, y: Double.random(in: 0..<900, using: &random)),
                                                    animated: Bool.random(using: &random))
                default: scene.feed.scroll(to: Int.random(in: 0..<300, using: &random), at: .top, animated: Bool.random(using: &random))
                }
            case 62..<66:
                // The UI thread stalls for a while: input goes on, frames do not.
                stall = Int.random(in: 5..<60, using: &random)
            default:
                break
            }
            if stall > 0 {
                stall -= 1
                if stall % 8 == 0 { usleep(1_000) }
            } else if Int.random(in: 0..<3, using: &random) == 0 {
                frame()
            }
        }
        if buttonDown { push(.pointerUp(pointer, button: 1)) }
        let seconds = Date().timeIntervalSince(start)

        // Quiescence: no more input; frames until nothing moves and nothing is pending on either thread.
        var quiet = 0
        let deadline = Date(timeIntervalSinceNow: 30)
        while quiet < 6 && Date() < deadline {
            _ = thread.performAndWait { _, _ in 0 }
            frame()
            Runtime.shared.scheduler.waitUntilIdle()
            if !host.needsFrame && host.pendingWork.isEmpty && !host.movesByItself { quiet += 1 } else { quiet = 0 }
            usleep(4_000)
        }
        XCTAssertEqual(quiet, 6, "seed 0x\(String(seed, radix: 16, uppercase: true)): the scene came to rest "
                       + "(needs a frame: \(host.needsFrame), pending: \(host.pendingWork), moves by itself: \(host.movesByItself))")
        _ = thread.performAndWait { _, _ in 0 }
        _ = thread.performAndWait { _, _ in 0 }

        // Every scroll offset the UI thread holds is the one on screen.
        let shown = try XCTUnwrap(thread.shownSnapshot)
        let now = thread.now
        var scrolls: [(String, Layer?, Double)] = [
            ("feed", scene.feed.layer.sublayers.first { $0.name == "list-content" }, scene.feed.contentOffset),
            ("side", scene.side.contentNode.layerIfLoaded, scene.side.contentOffset.y),
        ]
        if let shelf = shelfBox.withLock({ $0 }), shelf.isNodeLoaded {
            scrolls.append(("shelf", shelf.layer.sublayers.first { $0.name == "list-content" }, shelf.contentOffset))
        }
        if let carousel = carouselBox.withLock({ $0 }), carousel.isNodeLoaded {
            scrolls.append(("carousel", carousel.contentNode.layerIfLoaded, carousel.contentOffset.x))
        }
        let horizontal: Set<String> = ["shelf", "carousel"]
        for (name, layer, offset) in scrolls {
            guard let layer, let drawn = shown.layer(serial: layer.serial) else { continue }
            XCTAssertFalse(drawn.isAnimating(at: now), "seed 0x\(String(seed, radix: 16, uppercase: true)): \(name) at rest on screen")
            let position = horizontal.contains(name) ? drawn.presentedFrame(at: now).minX : drawn.presentedFrame(at: now).minY
            XCTAssertEqual(-position, offset, accuracy: 0.001,
                           "seed 0x\(String(seed, radix: 16, uppercase: true)): \(name)'s offset on screen is the UI thread's")
        }

        // The screen equals a synchronous render of the same layers.
        let screen = try XCTUnwrap(thread.performAndWait { compositor, _ in compositor.backend.readPixels() } ?? nil)
        let backend = try SDLRenderBackend(.init(title: "oracle", size: size, scale: 1, headless: true, renderDriver: .software))
        let oracle = Compositor(backend: backend, configuration: .init(clearColor: Color(rgb: 0x101010)))
        let expected = try XCTUnwrap(oracle.capture(host.rootLayer))
        let (difference, _) = GoldenImage.compare(screen, expected, tolerance: 0)
        XCTAssertEqual(difference.differingPixels, 0,
                       "seed 0x\(String(seed, radix: 16, uppercase: true)) (TESSERA_STRESS_SEED replays it): the screen is not the model")
        print(String(format: "interaction stress: seed 0x%llX, %d operations in %.2f s (%.0f ops/s); %d wheel events, %d moved "
                     + "on the compositor thread first; feed at %.1f, side at %.1f; %d pixels equal to the synchronous render",
                     seed, operations, seconds, Double(operations) / seconds, wheels, movedByCompositor,
                     scene.feed.contentOffset, scene.side.contentOffset.y, expected.width * expected.height - difference.differingPixels))
        if operations >= 2_000 {
            XCTAssertGreaterThan(movedByCompositor, 0, "the compositor thread took part")
            XCTAssertLessThan(movedByCompositor, wheels, "and left some to the UI thread (the overlay, the carousel)")
        }
        host.setRootNode(nil)
    }
}
