import Foundation
import Tessera
import TestSupport
import XCTest
@testable import NodeRuntime

/// Draws counted by box name.
private let boxDraws = Locked([String: Int]())

private func drawCount(_ name: String) -> Int { boxDraws.withLock { $0[name, default: 0] } }

/// A box that fills itself with a theme colour.
private final class ThemedBoxNode: Node, NodeDrawing, @unchecked Sendable {
    func drawParameters() -> Color { themeColor(.accent) }
    static func draw(_ color: Color, in context: inout BitmapContext, info: DrawInfo) {
        boxDraws.withLock { $0["themed", default: 0] += 1 }
        context.fill(info.bounds, color: color)
    }
}

/// A box of a fixed colour: it depends on nothing.
private final class PlainBoxNode: Node, NodeDrawing, @unchecked Sendable {
    func drawParameters() -> Color { Color(rgb: 0x30A050) }
    static func draw(_ color: Color, in context: inout BitmapContext, info: DrawInfo) {
        boxDraws.withLock { $0["plain", default: 0] += 1 }
        context.fill(info.bounds, color: color)
    }
}

/// Three boxes in a row: themed (drawn in `.accent`), plain, and a node whose background is `.background`;
/// a text under them.
private final class AppearanceScreen: Node, @unchecked Sendable {
    let themed = ThemedBoxNode()
    let plain = PlainBoxNode()
    let backdrop = Node()
    let text = TextNode("Scaled text", attributes: TextAttributes(font: .system(size: 16), color: .black))

    override init() {
        super.init()
        backgroundColor = Color(rgb: 0x808080)
        for node in [themed, plain, backdrop] as [Node] {
            node.preferredSize = Size(width: 40, height: 40)
        }
        backdrop.themedBackgroundColor = .background
        for node in [themed, plain, backdrop, text] as [Node] { addSubnode(node) }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(spacing: 10, alignItems: .start) {
            HStack(spacing: 10) { [themed, plain, backdrop] }
            text
        }.inset(10)
    }
}

/// A field with text in the theme's label colour, inset.
private final class FieldScreen: Node, @unchecked Sendable {
    let field = EditableTextNode(text: "Hello field", attributes: .themed(font: .system(size: 16), .label))

    override init() {
        super.init()
        addSubnode(field)
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        VStack(alignItems: .start) { field.width(.points(220)) }.inset(10)
    }
}

/// The appearance in the runtime: the environment's override, themes by variant, the nodes that follow
/// a change (and only those), text that grows with the text scale, and slides left out for reduced
/// motion.
@MainActor
final class AppearanceTests: XCTestCase {
    /// Frames until the host has nothing left to do: workers, layouts sent to the background and
    /// the commits they bring (a change of appearance lays text out again, maybe off this thread).
    private func settle(_ host: NodeHost, time: inout Double) {
        TestSupport.settle(host, time: &time)
        XCTAssertNoThrow(try host.settle())
        time = max(time, host.time)
    }

    override func setUp() async throws {
        // Tests before these (an app's own theme, an appearance left set) must not decide what they see.
        Runtime.shared.setAppearance(.standard)
        Runtime.shared.setTheme(.standard)
    }

    override func tearDown() async throws {
        Runtime.shared.setAppearance(.standard)
        Runtime.shared.setTheme(.standard)
    }

    func testTheOverrideNamesWhatItReplaces() async throws {
        let (override, unknown) = AppearanceOverride.parse("dark, High-Contrast,text-scale=1.5,reduced-motion,accent=#FF8000,sparkly,text-scale=abc")
        XCTAssertEqual(override.colorScheme, .dark)
        XCTAssertEqual(override.contrast, .high)
        XCTAssertEqual(override.textScale, 1.5)
        XCTAssertEqual(override.reducedMotion, true)
        XCTAssertEqual(override.accentColor, Color(rgb: 0xFF8000))
        XCTAssertEqual(unknown, ["sparkly", "text-scale=abc"])
        // Only what it names: the desktop's dark stays under a text scale alone.
        let desktop = Appearance(colorScheme: .dark, accentColor: Color(rgb: 0x112233))
        let scaled = AppearanceOverride.parse("text-scale=2").override.applied(to: desktop)
        XCTAssertEqual(scaled, Appearance(colorScheme: .dark, accentColor: Color(rgb: 0x112233), textScale: 2))
        XCTAssertNil(AppearanceOverride.fromEnvironment([:]))
        XCTAssertEqual(AppearanceOverride.fromEnvironment(["TESSERA_APPEARANCE": "light"])?.colorScheme, .light)
        // Scales out of range are brought in; NaN is 1.
        XCTAssertEqual(AppearanceOverride.parse("text-scale=40").override.textScale, 3)
        XCTAssertEqual(Appearance(textScale: .nan).textScale, 1)
        XCTAssertEqual(Appearance(textScale: 0.1).textScale, 0.5)
    }

    func testAThemeResolvesNamesByVariantAccentAndFallback() async throws {
        let theme = Theme.standard.adding(light: ThemeColors(["bubble": Color(rgb: 0xE3FEE0)]),
                                          dark: ThemeColors(["bubble": Color(rgb: 0x2B5278)]))
        XCTAssertEqual(theme.color(.background, for: .standard), Color(rgb: 0xFFFFFF))
        XCTAssertEqual(theme.color(.background, for: Appearance(colorScheme: .dark)), Color(rgb: 0x17212B))
        XCTAssertEqual(theme.color(.label, for: Appearance(colorScheme: .dark, contrast: .high)), Color(rgb: 0xFFFFFF))
        XCTAssertEqual(theme.color("bubble", for: Appearance(colorScheme: .dark)), Color(rgb: 0x2B5278))
        // A name high contrast does not give takes its scheme's colour; one no variant knows is magenta.
        XCTAssertEqual(theme.color("bubble", for: Appearance(colorScheme: .dark, contrast: .high)), Color(rgb: 0x2B5278))
        XCTAssertEqual(theme.color("nowhere", for: .standard), Theme.missingColor)
        // The desktop's accent, with readable text on it.
        let yellow = Appearance(accentColor: Color(rgb: 0xF6D743))
        XCTAssertEqual(theme.color(.accent, for: yellow), Color(rgb: 0xF6D743))
        XCTAssertEqual(theme.color(.onAccent, for: yellow), .black)
        XCTAssertEqual(theme.color(.onAccent, for: Appearance(accentColor: Color(rgb: 0x203080))), .white)
    }

    /// Dark mode redraws the node that draws a theme colour and recolours the themed background; the
    /// plain box is not drawn again. The pixels change where the theme says.
    func testOnlyTheNodesThatDependOnColoursRedrawAndThePixelsChange() async throws {
        let (host, _) = try OffscreenRender.makeHost(size: Size(width: 200, height: 120))
        defer { host.setRootNode(nil) }
        let screen = AppearanceScreen()
        host.setRootNode(screen)
        var time = 0.0
        settle(host, time: &time)
        let before = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(before.pixel(x: 30, y: 30), Color(rgb: 0x3390EC).premultipliedARGB, "light accent")
        XCTAssertEqual(before.pixel(x: 130, y: 30), Color(rgb: 0xFFFFFF).premultipliedARGB, "light background")
        XCTAssertTrue(screen.themed.appearanceDependencies.contains(.colors))
        XCTAssertTrue(screen.plain.appearanceDependencies.isEmpty)
        XCTAssertEqual(screen.text.appearanceDependencies, .textScale, "text depends on the scale, not on colours")

        let themedDraws = drawCount("themed"), plainDraws = drawCount("plain")
        let draws = Runtime.shared.counters.displaysStarted.load(ordering: .relaxed)
        let change = Runtime.shared.setAppearance(Appearance(colorScheme: .dark))
        XCTAssertEqual(change, .colors)
        XCTAssertTrue(host.needsFrame, "a host at rest has a frame to run")
        settle(host, time: &time)
        XCTAssertEqual(drawCount("themed"), themedDraws + 1, "the themed box drew once more")
        XCTAssertEqual(drawCount("plain"), plainDraws, "the plain box did not draw")
        XCTAssertEqual(Runtime.shared.counters.displaysStarted.load(ordering: .relaxed), draws + 1,
                       "one draw in all: not the text (a fixed colour), not the plain box")
        let after = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(after.pixel(x: 30, y: 30), Color(rgb: 0x5EB5F7).premultipliedARGB, "dark accent")
        XCTAssertEqual(after.pixel(x: 80, y: 30), before.pixel(x: 80, y: 30), "plain box unchanged")
        XCTAssertEqual(after.pixel(x: 130, y: 30), Color(rgb: 0x17212B).premultipliedARGB, "dark background")

        // The same appearance again changes nothing and draws nothing.
        XCTAssertEqual(Runtime.shared.setAppearance(Appearance(colorScheme: .dark)), [])
        settle(host, time: &time)
        XCTAssertEqual(drawCount("themed"), themedDraws + 1)
    }

    /// A larger text scale measures text again, larger, and lays out what holds it; boxes do not draw.
    func testTextGrowsWithTheTextScale() async throws {
        let (host, _) = try OffscreenRender.makeHost(size: Size(width: 300, height: 160))
        defer { host.setRootNode(nil) }
        let screen = AppearanceScreen()
        host.setRootNode(screen)
        var time = 0.0
        settle(host, time: &time)
        let size = screen.text.frame.size
        let plainDraws = drawCount("plain"), themedDraws = drawCount("themed")
        let before = try XCTUnwrap(OffscreenRender.capture(host))
        XCTAssertEqual(Runtime.shared.setAppearance(Appearance(textScale: 1.5)), .textScale)
        settle(host, time: &time)
        XCTAssertEqual(screen.text.frame.height, size.height * 1.5, accuracy: 3, "the line is half again as tall")
        XCTAssertGreaterThan(screen.text.frame.width, size.width * 1.3)
        XCTAssertEqual(drawCount("plain"), plainDraws)
        XCTAssertEqual(drawCount("themed"), themedDraws)
        let after = try XCTUnwrap(OffscreenRender.capture(host))
        // The text's ink: dark pixels on the grey screen, half again as many in each direction.
        let region = Rect(x: 0, y: 60, width: 300, height: 100)
        let inkBefore = InkPixels.count(in: before, rect: region, threshold: 60)
        let inkAfter = InkPixels.count(in: after, rect: region, threshold: 60)
        XCTAssertGreaterThan(inkBefore, 50)
        XCTAssertGreaterThan(Double(inkAfter), Double(inkBefore) * 1.8, "about 1.5² as much ink")
        // The text as set is unchanged: only its measure is scaled.
        XCTAssertEqual(screen.text.attributedText.runs.first?.attributes.font.size, 16)
    }

    /// A field shows its text in the theme's colour and at the text scale, again after each change.
    func testAFieldFollowsColoursAndTheTextScale() async throws {
        let (host, _) = try OffscreenRender.makeHost(size: Size(width: 240, height: 100),
                                                     configuration: .init(clearColor: Color(rgb: 0x808080)))
        defer { host.setRootNode(nil) }
        let screen = FieldScreen()
        let field = screen.field
        host.setRootNode(screen)
        var time = 0.0
        settle(host, time: &time)
        let height = field.frame.height
        func darkestAndLightest(_ bitmap: Bitmap) -> (dark: Int, light: Int) {
            var dark = 0, light = 0
            for y in 10..<Int(field.frame.maxY) {
                for x in 10..<200 {
                    let pixel = bitmap.pixel(x: x, y: y)
                    let level = Int((pixel >> 16) & 0xFF)
                    if level < 0x30 { dark += 1 }
                    if level > 0xD0 { light += 1 }
                }
            }
            return (dark, light)
        }
        let light = darkestAndLightest(try XCTUnwrap(OffscreenRender.capture(host)))
        XCTAssertGreaterThan(light.dark, 30, "dark ink on grey")
        XCTAssertEqual(light.light, 0)

        Runtime.shared.setAppearance(Appearance(colorScheme: .dark))
        settle(host, time: &time)
        let dark = darkestAndLightest(try XCTUnwrap(OffscreenRender.capture(host)))
        XCTAssertGreaterThan(dark.light, 30, "light ink on grey")
        XCTAssertEqual(dark.dark, 0)

        Runtime.shared.setAppearance(Appearance(colorScheme: .dark, textScale: 2))
        settle(host, time: &time)
        XCTAssertGreaterThan(field.frame.height, height * 1.7, "the field grew with its text")
    }

    /// With reduced motion a layout transition's slides land at once; fades still run.
    func testReducedMotionLeavesOutSlides() async throws {
        let (host, _) = try OffscreenRender.makeHost(size: Size(width: 200, height: 120))
        defer { host.setRootNode(nil) }
        let screen = AppearanceScreen()
        host.setRootNode(screen)
        var time = 0.0
        settle(host, time: &time)
        let animator = Runtime.shared.animator
        Runtime.shared.setAppearance(Appearance(reducedMotion: true))
        XCTAssertTrue(animator.reducesMotion)
        let layer = screen.plain.layer
        animator.animate(layer, .origin(from: Point(x: 0, y: 0), to: Point(x: 50, y: 10)), duration: 0.3)
        XCTAssertEqual(animator.count, 0, "the slide ended at once")
        XCTAssertEqual(layer.frame.origin, Point(x: 50, y: 10))
        animator.animate(layer, .opacity(from: 0, to: 1), duration: 0.3)
        XCTAssertEqual(animator.count, 1, "a fade still runs")
        Runtime.shared.setAppearance(.standard)
        XCTAssertFalse(animator.reducesMotion)
        animator.stop(layer, .opacity(from: 0, to: 1))
    }
}
