import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime

/// Editing through the host's event path: focus, typing, the input method's marked text, keys by
/// grapheme and word, selection, the clipboard, undo, submitting, growth and focus traversal.
@MainActor
final class EditableTextNodeTests: XCTestCase {
    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
            EditableTextNode.localClipboard = nil
        }
    }

    private func makeHarness(fields count: Int = 1, text: String = "", configure: (EditableTextNode) -> Void = { _ in })
        -> FieldHarness {
        FieldHarness(fields: count, text: text, configure: configure)
    }

    private func send(_ harness: FieldHarness, _ events: [InputEvent]) { harness.send(events) }
    private func type(_ harness: FieldHarness, _ text: String) { harness.type(text) }
    private func key(_ harness: FieldHarness, _ key: Key, _ modifiers: KeyModifiers = []) { harness.key(key, modifiers) }
    private func click(_ harness: FieldHarness, _ field: EditableTextNode, at local: Point = Point(x: 5, y: 5)) {
        harness.click(field, at: local)
    }

    /// A text set from another thread while an edit is being made is kept: the edit applies to it.
    func testTextSetFromAWorkerDuringAnEditIsNotLost() async {
        let harness = makeHarness(text: "hello")
        let field = harness.fields[0]
        click(harness, field)
        var setOnce = false
        EditableTextNode.willEditForTesting = { node in
            guard node === field, !setOnce else { return }
            setOnce = true
            onBackgroundThread { field.text = "from a worker" }
        }
        defer { EditableTextNode.willEditForTesting = nil }
        type(harness, "!")
        XCTAssertTrue(setOnce)
        XCTAssertEqual(field.text.replacingOccurrences(of: "!", with: ""), "from a worker",
                       "the worker's text, with the typed character in it: \(field.text)")
    }

    func testClickingFocusesAndTypingInsertsAtTheCaret() async {
        let harness = makeHarness()
        let field = harness.fields[0]
        var changes: [String] = []
        field.onChange = { changes.append($0) }
        XCTAssertNil(harness.host.focusedNode)
        click(harness, field)
        XCTAssertTrue(harness.host.focusedNode === field)
        type(harness, "Hello")
        type(harness, " world")
        XCTAssertEqual(field.text, "Hello world")
        XCTAssertEqual(field.selectedRange, 11..<11)
        XCTAssertEqual(changes, ["Hello", "Hello world"])
        // The caret sits after the text, on its line, drawn as its own layer.
        let layout = field.shownTextLayout!
        XCTAssertEqual(field.caretNode.frame.minX, layout.lines[0].width - 1, accuracy: 1.5)
        XCTAssertFalse(field.caretNode.isHidden)
        // Typed characters arrive as keys too; the field takes them so no shortcut fires.
        var shortcut = false
        harness.host.keyHandler = { _, _ in shortcut = true; return true }
        key(harness, .character("3"))
        XCTAssertFalse(shortcut, "a digit typed into the field is not the app's tab shortcut")
        key(harness, .escape)
        XCTAssertTrue(shortcut, "Escape goes on to the app when the field has no use for it")
    }

    func testArrowsMoveByGraphemeAndWordAndShiftExtends() async {
        let harness = makeHarness(text: "Hi 👨‍👩‍👧 there friend")
        let field = harness.fields[0]
        click(harness, field)
        field.selectedRange = 3..<3
        key(harness, .right)
        XCTAssertEqual(field.selectedRange, 11..<11, "the family emoji is one step: eight UTF-16 units")
        key(harness, .left)
        XCTAssertEqual(field.selectedRange, 3..<3)
        key(harness, .right, .control)
        XCTAssertEqual(field.selectedRange, 17..<17, "Ctrl+→ stops at the end of the next word (an emoji is no word)")
        key(harness, .left, [.control, .shift])
        XCTAssertEqual(field.selectedRange, 12..<17, "Ctrl+Shift+← selects back to the word's start")
        key(harness, .character("a"), .control)
        XCTAssertEqual(field.selectedRange, 0..<24)
        key(harness, .backspace)
        XCTAssertEqual(field.text, "")
        XCTAssertFalse(field.selectionNodes.contains { !$0.isHidden }, "no selection is shown once it is gone")
    }

    func testSelectionIsDrawnBehindTheTextWithoutRedrawingIt() async {
        let harness = makeHarness(text: "select these words")
        let field = harness.fields[0]
        click(harness, field)
        let drawsBefore = harness.host.runtime.counters.snapshot.displaysStarted
        key(harness, .home)
        key(harness, .end, .shift)
        XCTAssertEqual(field.selectedRange, 0..<18)
        let shown = field.selectionNodes.filter { !$0.isHidden }
        XCTAssertEqual(shown.count, 1)
        let layout = field.shownTextLayout!
        XCTAssertEqual(shown[0].frame.width, layout.lines[0].width, accuracy: 1)
        XCTAssertTrue(field.caretNode.isHidden, "a selection hides the caret")
        XCTAssertEqual(harness.host.runtime.counters.snapshot.displaysStarted, drawsBefore,
                       "selecting moves layers; the text is not drawn again")
    }

    func testDoubleClickSelectsAWordAndTripleClickTheLine() async {
        let harness = makeHarness(text: "alpha beta gamma")
        let field = harness.fields[0]
        click(harness, field)
        let layout = field.shownTextLayout!
        let inBeta = layout.caretRect(forOffset: 8, inWidth: field.bounds.width)
        let point = Point(x: inBeta.minX, y: inBeta.midY)
        click(harness, field, at: point)
        click(harness, field, at: point)
        XCTAssertEqual(field.selectedRange, 6..<10, "a double click selects the word")
        click(harness, field, at: point)
        XCTAssertEqual(field.selectedRange, 0..<16, "a triple click selects the line")
    }

    func testMarkedTextShowsUnderlinedAndCommitReplacesIt() async {
        let harness = makeHarness(text: "Tokyo ")
        let field = harness.fields[0]
        click(harness, field)
        key(harness, .end)
        send(harness, [.textEditing("とうきょう", cursor: 5)])
        XCTAssertEqual(field.markedText, "とうきょう")
        XCTAssertEqual(field.text, "Tokyo ", "marked text is not part of the text yet")
        let shown = field.shownTextLayout!.text
        XCTAssertEqual(shown.string, "Tokyo とうきょう")
        XCTAssertEqual(shown.runs.last?.attributes.isUnderlined, true, "the composition is underlined")
        // Keys belong to the input method while it composes.
        key(harness, .left)
        XCTAssertEqual(field.selectedRange, 6..<6)
        send(harness, [.textEditing("", cursor: 0), .textInput("東京")])
        XCTAssertNil(field.markedText)
        XCTAssertEqual(field.text, "Tokyo 東京")
        XCTAssertEqual(field.selectedRange, 8..<8)
    }

    /// While the input method composes, the app's shortcuts still reach it (a menu's Quit or Save
    /// with Ctrl or Alt); the field's own editing shortcuts and plain keys stay the input method's.
    func testTheAppsShortcutsPassAFieldThatIsComposing() async {
        let harness = makeHarness(text: "Tokyo ")
        let field = harness.fields[0]
        click(harness, field)
        key(harness, .end)
        var shortcuts: [String] = []
        harness.host.keyHandler = { key, modifiers in
            if case let .character(character) = key { shortcuts.append((modifiers.contains(.alt) ? "alt+" : "ctrl+") + String(character)) }
            return true
        }
        send(harness, [.textEditing("とうきょう", cursor: 5)])
        key(harness, .character("q"), .control)
        key(harness, .character("f"), .alt)
        XCTAssertEqual(shortcuts, ["ctrl+q", "alt+f"], "the app's shortcuts arrive")
        // The field's editing shortcuts wait for the composition to end: nothing pasted, undone, selected.
        key(harness, .character("z"), .control)
        key(harness, .character("a"), .control)
        key(harness, .character("k"))
        XCTAssertEqual(shortcuts, ["ctrl+q", "alt+f"])
        XCTAssertEqual(field.text, "Tokyo ")
        XCTAssertEqual(field.selectedRange, 6..<6)
        XCTAssertEqual(field.markedText, "とうきょう", "the composition goes on")
    }

    /// An input method's commit is one undo step of its own: typing before it and after it are others.
    func testACommitReplacingTheCompositionIsOneUndoStep() async {
        let harness = makeHarness()
        let field = harness.fields[0]
        click(harness, field)
        type(harness, "a")
        type(harness, "b")
        send(harness, [.textEditing("にほんご", cursor: 4)])
        send(harness, [.textEditing("", cursor: 0), .textInput("日本語")])
        type(harness, "c")
        XCTAssertEqual(field.text, "ab日本語c")
        key(harness, .character("z"), .control)
        XCTAssertEqual(field.text, "ab日本語", "the typing after the commit is a step of its own")
        key(harness, .character("z"), .control)
        XCTAssertEqual(field.text, "ab", "one undo takes the commit back whole, and only it")
        XCTAssertNil(field.markedText)
        key(harness, .character("z"), .control)
        XCTAssertEqual(field.text, "")
        // A commit that comes while the composition still shows replaces it in one step too.
        send(harness, [.textEditing("とうきょう", cursor: 5)])
        send(harness, [.textInput("東京")])
        XCTAssertEqual(field.text, "東京")
        key(harness, .character("z"), .control)
        XCTAssertEqual(field.text, "")
        // SDL cuts a long commit into text events of 32 bytes at most, read together: still one step,
        // and the typing after it another.
        type(harness, "go ")
        send(harness, [.textEditing("にほんごのにゅうりょくをためすためのながいぶんしょうです", cursor: 28)])
        send(harness, [.textInput("日本語の入力を試すた"), .textInput("めの長い文章です"), .textEditing("", cursor: 0)])
        XCTAssertEqual(field.text, "go 日本語の入力を試すための長い文章です")
        type(harness, "x")
        key(harness, .character("z"), .control)
        XCTAssertEqual(field.text, "go 日本語の入力を試すための長い文章です")
        key(harness, .character("z"), .control)
        XCTAssertEqual(field.text, "go ", "the commit's pieces are undone together")
    }

    /// The input method's caret and selection (its highlighted segment) show in the composition:
    /// the field's displayed caret and selection are the input method's, offset by the text before.
    func testTheInputMethodsCaretAndSelectionShowInTheComposition() async {
        let harness = makeHarness(text: "Go to ")
        let field = harness.fields[0]
        click(harness, field)
        key(harness, .end)
        send(harness, [.textEditing("とうきょうえき", cursor: 2, selected: 3)])
        var shown = field.displayedPositions(isPlaceholder: false)
        XCTAssertEqual(shown.selection, 8..<11, "the input method's selection, after the text before it")
        XCTAssertEqual(field.selectedRange, 6..<6, "the field's own selection stays where the composition is")
        send(harness, [.textEditing("とうきょうえき", cursor: 4)])
        shown = field.displayedPositions(isPlaceholder: false)
        XCTAssertEqual(shown.caret, 10)
        XCTAssertEqual(shown.selection, 10..<10, "no selection: the input method's caret")
        // A selection past the composition's end is cut at its end.
        send(harness, [.textEditing("えき", cursor: 1, selected: 9)])
        XCTAssertEqual(field.displayedPositions(isPlaceholder: false).selection, 7..<8)
    }

    /// Focus moving to another field while the input method composes ends the composition: the
    /// field that showed it keeps the text, the input method is told to drop its own (so it commits
    /// nothing into the next field), and text typed next goes to the new field only.
    func testFocusMovingToAnotherFieldEndsTheComposition() async throws {
        let harness = makeHarness(fields: 2)
        let platform = try XCTUnwrap(harness.host.compositor.textInputPlatform as? RecordingRenderBackend)
        let (first, second) = (harness.fields[0], harness.fields[1])
        click(harness, first)
        click(harness, second)
        XCTAssertEqual(platform.cancelledCompositions, 0, "no composition, nothing to end")
        click(harness, first)
        send(harness, [.textEditing("ぺきん", cursor: 3)])
        XCTAssertEqual(first.markedText, "ぺきん")
        click(harness, second)
        XCTAssertEqual(platform.cancelledCompositions, 1, "the input method is told to drop its composition")
        XCTAssertNil(first.markedText)
        XCTAssertEqual(first.text, "ぺきん", "the field that showed the composition keeps it")
        XCTAssertNotNil(platform.textInputCaret, "text input stays on for the new field")
        type(harness, "x")
        XCTAssertEqual(second.text, "x")
        XCTAssertEqual(first.text, "ぺきん")
        // Focus leaving for no field stops text input (which resets the input method) instead.
        send(harness, [.textEditing("しゃんはい", cursor: 5)])
        harness.host.focus(nil)
        XCTAssertNil(platform.textInputCaret)
        XCTAssertEqual(platform.cancelledCompositions, 1)
        XCTAssertEqual(second.text, "xしゃんはい")
    }

    func testCopyCutPasteAndUndoRedo() async {
        let harness = makeHarness()
        let field = harness.fields[0]
        click(harness, field)
        type(harness, "a")
        type(harness, "b")
        type(harness, "c")
        type(harness, " ")
        type(harness, "d")
        XCTAssertEqual(field.text, "abc d")
        key(harness, .character("z"), .control)
        XCTAssertEqual(field.text, "abc ", "undo takes back the last word typed")
        key(harness, .character("z"), .control)
        XCTAssertEqual(field.text, "", "a word and the space after it are one step")
        key(harness, .character("z"), .control)
        XCTAssertEqual(field.text, "", "nothing more to undo")
        key(harness, .character("z"), [.control, .shift])
        XCTAssertEqual(field.text, "abc ")
        key(harness, .character("y"), .control)
        XCTAssertEqual(field.text, "abc d")
        key(harness, .character("a"), .control)
        key(harness, .character("c"), .control)
        key(harness, .end)
        key(harness, .character("v"), .control)
        XCTAssertEqual(field.text, "abc dabc d")
        key(harness, .character("a"), .control)
        key(harness, .character("x"), .control)
        XCTAssertEqual(field.text, "")
        key(harness, .character("v"), .control)
        XCTAssertEqual(field.text, "abc dabc d")
        key(harness, .character("z"), .control)
        XCTAssertEqual(field.text, "", "a paste is one step")
    }

    func testEnterSubmitsAndShiftEnterAddsALine() async {
        let harness = makeHarness()
        let field = harness.fields[0]
        var submitted: [String] = []
        field.onSubmit = { submitted.append($0) }
        click(harness, field)
        type(harness, "first")
        key(harness, .enter, .shift)
        type(harness, "second")
        XCTAssertEqual(field.text, "first\nsecond")
        key(harness, .enter)
        XCTAssertEqual(submitted, ["first\nsecond"])
        field.returnKeyBehavior = .newline
        key(harness, .enter)
        XCTAssertEqual(field.text, "first\nsecond\n")
        field.isMultiline = false
        field.text = "one\ntwo"
        XCTAssertEqual(field.text, "one two", "a single-line field turns newlines into spaces")
    }

    func testTheFieldGrowsUpToItsLineLimitThenScrollsToTheCaret() async {
        let harness = makeHarness { $0.maximumVisibleLines = 3 }
        let field = harness.fields[0]
        click(harness, field)
        let oneLine = field.frame.height
        XCTAssertGreaterThan(oneLine, 10)
        key(harness, .enter, .shift)
        XCTAssertEqual(field.frame.height, 2 * oneLine, accuracy: 1, "two lines")
        for _ in 0..<4 { key(harness, .enter, .shift) }
        XCTAssertEqual(field.frame.height, 3 * oneLine, accuracy: 1, "stops at three lines")
        XCTAssertEqual(field.scrollOffset, 3 * oneLine, accuracy: 1.5, "scrolled to the sixth line")
        let firstLaidOut = field.shownLines?.windowLines.lowerBound ?? -1
        XCTAssertEqual(field.textNode.frame.minY, Double(firstLaidOut) * oneLine - field.scrollOffset, accuracy: 1.5,
                       "the lines laid out sit where they are in the text")
        XCTAssertEqual(field.caretNode.frame.maxY, field.bounds.height, accuracy: 1.5, "the caret is in view")
    }

    /// The rectangle the input method places its candidate window at follows the caret (window
    /// points): down as the field grows line by line, kept on the last line shown once the field
    /// scrolls, and down again when a composition wraps onto a new line.
    func testTheInputMethodsWindowFollowsTheCaretAsTheFieldGrowsAndScrolls() async throws {
        let harness = makeHarness { $0.maximumVisibleLines = 3 }
        let field = harness.fields[0]
        let platform = try XCTUnwrap(harness.host.compositor.textInputPlatform as? RecordingRenderBackend)
        click(harness, field)
        func caretInWindow() -> Rect {
            let origin = field.convertFromRoot(.zero)
            let caret = try! XCTUnwrap(field.textInputCaret)
            return Rect(x: caret.minX - origin.x, y: caret.minY - origin.y, width: caret.width, height: caret.height)
        }
        let oneLine = field.frame.height
        let first = try XCTUnwrap(platform.textInputCaret)
        XCTAssertEqual(first, caretInWindow())
        var ys = [first.minY]
        for line in 1..<5 {
            key(harness, .enter, .shift)
            type(harness, "line \(line)")
            XCTAssertEqual(platform.textInputCaret, caretInWindow(), "line \(line)")
            ys.append(try XCTUnwrap(platform.textInputCaret).minY)
        }
        XCTAssertEqual(ys[1] - ys[0], oneLine, accuracy: 1, "down a line as the field grows")
        XCTAssertEqual(ys[2] - ys[1], oneLine, accuracy: 1)
        XCTAssertEqual(ys[3], ys[2], accuracy: 1, "the field scrolls: the caret stays on its last line shown")
        XCTAssertEqual(ys[4], ys[2], accuracy: 1)
        XCTAssertGreaterThan(field.scrollOffset, 0)
        // Up to the first line: the field scrolls back, and the input method's window goes with the caret.
        key(harness, .home, .control)
        XCTAssertEqual(field.scrollOffset, 0, accuracy: 0.5)
        XCTAssertEqual(try XCTUnwrap(platform.textInputCaret).minY, ys[0], accuracy: 1)
        XCTAssertEqual(platform.textInputCaret, caretInWindow())
        // A composition long enough to wrap takes the caret (at its end) onto the next line.
        key(harness, .end)
        send(harness, [.textEditing(String(repeating: "とうきょう", count: 8), cursor: 40)])
        XCTAssertEqual(platform.textInputCaret, caretInWindow())
        XCTAssertGreaterThan(try XCTUnwrap(platform.textInputCaret).minY, ys[0] + oneLine / 2, "on a line below")
    }

    func testTabMovesFocusAndKeysGoToTheFocusedField() async {
        let harness = makeHarness(fields: 3)
        let fields = harness.fields
        key(harness, .tab)
        XCTAssertTrue(harness.host.focusedNode === fields[0])
        key(harness, .tab)
        XCTAssertTrue(harness.host.focusedNode === fields[1])
        type(harness, "second")
        key(harness, .tab, .shift)
        XCTAssertTrue(harness.host.focusedNode === fields[0])
        key(harness, .tab, .shift)
        XCTAssertTrue(harness.host.focusedNode === fields[2], "Shift+Tab wraps around")
        type(harness, "third")
        XCTAssertEqual(fields.map(\.text), ["", "second", "third"])
        XCTAssertTrue(fields[2].caretNode.isHidden == false && fields[1].caretNode.isHidden, "only the focused field shows a caret")
    }

    func testTheCaretBlinksWithoutRedrawingTheText() async {
        let harness = makeHarness(text: "blink")
        let field = harness.fields[0]
        click(harness, field)
        let draws = harness.host.runtime.counters.snapshot.displaysStarted
        var seen: Set<Bool> = []
        for _ in 0..<90 {
            harness.frame()
            seen.insert(field.caretNode.isHidden)
        }
        XCTAssertEqual(seen, [true, false], "the caret shows and hides over a second and a half")
        XCTAssertEqual(harness.host.runtime.counters.snapshot.displaysStarted, draws)
    }

    /// A model update sets the text from another thread while the field is focused: the field shows
    /// it at the next frames, with the caret at its end, and the history starts again.
    func testTextSetFromAnotherThreadArrivesWhole() async {
        let harness = makeHarness()
        let field = harness.fields[0]
        click(harness, field)
        type(harness, "draft")
        let box = FieldBox(field: field)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            box.field.text = "Saved on another device"
            done.signal()
        }
        done.wait()
        XCTAssertEqual(field.text, "Saved on another device", "the text is there at once, on any thread")
        send(harness, [])
        XCTAssertEqual(field.selectedRange, 23..<23, "the caret moves to its end on the UI thread")
        XCTAssertEqual(field.shownTextLayout?.text.string, "Saved on another device")
        key(harness, .character("z"), .control)
        XCTAssertEqual(field.text, "Saved on another device", "setting the text clears the undo history")
    }

    func testCaretPositionsInRightToLeftText() async {
        let harness = makeHarness(text: "שלום")
        let field = harness.fields[0]
        click(harness, field)
        let width = field.bounds.width
        let layout = field.shownTextLayout!
        let line = layout.lineRects(inWidth: width)[0]
        XCTAssertEqual(layout.caretRect(forOffset: 0, inWidth: width).minX, line.maxX, accuracy: 0.5,
                       "a right-to-left line starts at its right edge")
        XCTAssertEqual(layout.caretRect(forOffset: 4, inWidth: width).minX, line.minX, accuracy: 0.5)
        key(harness, .home)
        key(harness, .left)
        XCTAssertEqual(field.selectedRange, 1..<1, "← moves forward through right-to-left text")
        XCTAssertLessThan(field.caretNode.frame.minX, line.maxX - 2)
    }
}

/// A field handed to another thread, which only sets its text.
private struct FieldBox: @unchecked Sendable { let field: EditableTextNode }
