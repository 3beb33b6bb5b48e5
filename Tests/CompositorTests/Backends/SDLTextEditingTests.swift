import CSDL
import Foundation
import XCTest
@testable import Compositor

/// An input method's composition as SDL delivers it: SDL is asked for extended text, so a composition
/// longer than `SDL_TEXTEDITING`'s 32 bytes arrives whole as `SDL_TEXTEDITING_EXT` (its text SDL's
/// allocation, freed once by whoever reads the event), with the input method's cursor and selection.
/// Events are pushed on SDL's own queue under the dummy driver, as SDL's fcitx and IBus clients push them.
@MainActor
final class SDLTextEditingTests: XCTestCase {
    /// 60 bytes of UTF-8: twenty kana and ideographs of three bytes each.
    static let sixtyBytes = "にほんごのにゅうりょくをためすためのながいぶんしょうです"
        .prefix(20).map(String.init).joined()

    private func window(_ title: String) throws -> SDLWindow {
        try SDLWindow(.init(title: title, size: Size(width: 16, height: 16), scale: 1, headless: true))
    }

    /// Pushes `SDL_TEXTEDITING_EXT` for `windowID` with `text` in an `SDL_malloc`'d copy, as
    /// `SDL_SendEditingText` does for a long composition.
    private func pushExtended(_ text: String, start: Int32, length: Int32, windowID: UInt32) {
        var event = SDL_Event()
        event.type = SDL_TEXTEDITING_EXT.rawValue
        event.editExt.windowID = windowID
        event.editExt.text = SDL_strdup(text)
        event.editExt.start = start
        event.editExt.length = length
        XCTAssertEqual(SDL_PushEvent(&event), 1)
    }

    func testTheWindowAsksSDLForExtendedText() async throws {
        _ = try window("hint")
        XCTAssertEqual(SDL_GetHintBoolean(SDL_HINT_IME_SUPPORT_EXTENDED_TEXT, SDL_FALSE), SDL_TRUE,
                       "without the hint SDL cuts a composition into 32-byte pieces")
    }

    func testALongCompositionArrivesWholeWithItsCursorAndSelection() async throws {
        XCTAssertEqual(Self.sixtyBytes.utf8.count, 60)
        let a = try window("a")
        _ = a.pollEvents()
        pushExtended(Self.sixtyBytes, start: 5, length: 3, windowID: a.windowID.rawValue)
        XCTAssertEqual(a.pollEvents(), [.input(.textEditing(Self.sixtyBytes, cursor: 5, selected: 3))])
        // No selection from the input method (SDL's -1) is none.
        pushExtended(Self.sixtyBytes, start: 20, length: -1, windowID: a.windowID.rawValue)
        XCTAssertEqual(a.pollEvents(), [.input(.textEditing(Self.sixtyBytes, cursor: 20, selected: 0))])
        // No cursor (SDL's -1, as IBus sends for a composition without one): at the end.
        pushExtended(Self.sixtyBytes, start: -1, length: -1, windowID: a.windowID.rawValue)
        XCTAssertEqual(a.pollEvents(), [.input(.textEditing(Self.sixtyBytes, cursor: 20, selected: 0))])
    }

    func testAShortCompositionKeepsTheInputMethodsSelection() async throws {
        let a = try window("a")
        _ = a.pollEvents()
        var event = SDL_Event()
        event.type = SDL_TEXTEDITING.rawValue
        event.edit.windowID = a.windowID.rawValue
        withUnsafeMutableBytes(of: &event.edit.text) { raw in
            let bytes = Array("とうきょう".utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        event.edit.start = 1
        event.edit.length = 2
        XCTAssertEqual(SDL_PushEvent(&event), 1)
        XCTAssertEqual(a.pollEvents(), [.input(.textEditing("とうきょう", cursor: 1, selected: 2))])
    }

    /// The test driver's own push (`pushTextEvent`) sends a long composition as SDL does.
    func testAPushedLongCompositionGoesAsExtendedText() async throws {
        let a = try window("a")
        _ = a.pollEvents()
        a.pushTextEvent(.textEditing(Self.sixtyBytes, cursor: 7, selected: 2))
        XCTAssertEqual(a.pollEvents(), [.input(.textEditing(Self.sixtyBytes, cursor: 7, selected: 2))])
    }

    /// The extended event's text is freed once wherever the event goes: read by its window, put aside
    /// for another window that then closed unread, or stamped with no window (then never copied to
    /// the other windows; glibc stops the process on a double free).
    func testAnExtendedCompositionIsFreedOnceWhereverItGoes() async throws {
        let a = try window("a")
        var b: SDLWindow? = try window("b")
        _ = a.pollEvents(); _ = b?.pollEvents()
        pushExtended(Self.sixtyBytes, start: 0, length: -1, windowID: b!.windowID.rawValue)
        pushExtended(Self.sixtyBytes, start: 1, length: -1, windowID: 0)
        XCTAssertEqual(a.pollEvents(), [.input(.textEditing(Self.sixtyBytes, cursor: 1, selected: 0))],
                       "one of no window is the reader's")
        b = nil  // closed with its composition unread
        let c = try window("c")
        XCTAssertEqual(c.pollEvents(), [], "the composition of no window was A's alone")
        XCTAssertEqual(a.pollEvents(), [])
    }

    /// SDL 2.26's Wayland driver sends a text-input-v3 `done`'s new composition before its commit:
    /// the commit is put first, as the protocol applies it, so the new composition stays; a
    /// composition and a commit of separate `done`s (the commit's empty composition after it) end
    /// the same; other events keep their order.
    func testOnWaylandACommitComesBeforeTheCompositionSentWithIt() {
        let editing = BackendEvent.input(.textEditing("えき", cursor: 2)), cleared = BackendEvent.input(.textEditing("", cursor: 0))
        let commit = BackendEvent.input(.textInput("東京")), piece = BackendEvent.input(.textInput("駅"))
        let key = BackendEvent.input(.keyDown(.tab, modifiers: []))
        XCTAssertEqual(SDLWindow.inTextInputV3Order([editing, commit, piece]), [commit, piece, editing])
        XCTAssertEqual(SDLWindow.inTextInputV3Order([key, editing, commit, key]), [key, commit, editing, key])
        XCTAssertEqual(SDLWindow.inTextInputV3Order([editing, commit, cleared]), [commit, editing, cleared])
        XCTAssertEqual(SDLWindow.inTextInputV3Order([cleared, editing, commit, editing]), [cleared, commit, editing, editing])
        XCTAssertEqual(SDLWindow.inTextInputV3Order([commit, cleared, key, editing]), [commit, cleared, key, editing])
    }

    /// Two compositions before a commit: only the one just before it (the commit's own `done`'s) is
    /// moved after it; a composition, keys, then text (typed, not the input method's commit) keep
    /// their order; two `done`s of a composition and a commit each come out commit first each.
    func testOnWaylandOnlyTheCompositionJustBeforeACommitMoves() {
        let older = BackendEvent.input(.textEditing("え", cursor: 1)), newer = BackendEvent.input(.textEditing("えき", cursor: 2))
        let commit = BackendEvent.input(.textInput("東京")), piece = BackendEvent.input(.textInput("駅"))
        let key = BackendEvent.input(.keyDown(.character("a"), modifiers: [])), typed = BackendEvent.input(.textInput("a"))
        XCTAssertEqual(SDLWindow.inTextInputV3Order([older, newer, commit]), [older, commit, newer])
        XCTAssertEqual(SDLWindow.inTextInputV3Order([older, key, typed]), [older, key, typed])
        XCTAssertEqual(SDLWindow.inTextInputV3Order([older, commit, newer, piece]), [commit, older, piece, newer])
        XCTAssertEqual(SDLWindow.inTextInputV3Order([older, commit, piece, newer, typed]), [commit, piece, older, typed, newer])
    }

    /// Whatever the read (every one of up to five events), the reordering loses no event, adds none, and keeps the order of every
    /// event that is not a composition.
    func testOnWaylandTheReorderingKeepsEveryEvent() {
        let kinds: [BackendEvent] = [.input(.textEditing("え", cursor: 1)), .input(.textEditing("", cursor: 0)),
                                     .input(.textInput("東")), .input(.textInput("京")), .input(.keyDown(.tab, modifiers: []))]
        // Every read of up to five of them.
        var reads: [[BackendEvent]] = [[]]
        var longest: [[BackendEvent]] = [[]]
        for _ in 1...5 {
            longest = longest.flatMap { read in kinds.map { read + [$0] } }
            reads += longest
        }
        for events in reads {
            let ordered = SDLWindow.inTextInputV3Order(events)
            XCTAssertEqual(ordered.count, events.count, "\(events)")
            func isComposition(_ event: BackendEvent) -> Bool { if case .input(.textEditing) = event { true } else { false } }
            XCTAssertEqual(ordered.filter { !isComposition($0) }, events.filter { !isComposition($0) }, "\(events)")
            XCTAssertEqual(ordered.filter(isComposition), events.filter(isComposition), "\(events)")
        }
    }
}
