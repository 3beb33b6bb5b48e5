import Compositor
import Foundation
import TestSupport
@testable import NodeRuntime

/// Editable fields stacked in a host over a recording backend, driven through the host's event path
/// on a virtual clock: the one driver of the editing tests.
@MainActor
final class FieldHarness {
    let host: NodeHost
    let fields: [EditableTextNode]
    let root: SpecNode
    private(set) var time = 0.0

    var field: EditableTextNode { fields[0] }

    /// `count` fields of 15-point text holding `text`, in a 400 × 300 window (`height` when given),
    /// each configured by `configure`; the host measures layouts in the background unless told not to.
    init(fields count: Int = 1, text: String = "", height: Int = 300, backgroundLayout: Bool = true,
         configure: (EditableTextNode) -> Void = { _ in }) {
        TextFixtures.useRepositoryFonts()
        Runtime.shared.contentsScale = 1
        let (host, _) = makeHost(width: 400, height: height)
        host.measuresLayoutInBackground = backgroundLayout
        let fields = (0..<count).map { _ -> EditableTextNode in
            let field = EditableTextNode(text: text, attributes: TextAttributes(font: .system(size: 15)), placeholder: "Message")
            configure(field)
            return field
        }
        let root = SpecNode("root") { _ in
            VStack(spacing: 10) { fields.map { $0.flexShrink(0) } }.inset(EdgeInsets(top: 10, left: 10, bottom: 10, right: 10))
        }
        self.host = host
        self.fields = fields
        self.root = root
        host.setRootNode(root)
        settle(host, time: &time)
    }

    /// Runs a frame with `events`, then frames until the background layout and the draws it
    /// started are done and applied.
    func send(_ events: [InputEvent]) {
        time += 1.0 / 60
        host.runFrame(time: time, events: events)
        for _ in 0..<4 {
            Node.backgroundLayoutQueue.sync(flags: .barrier) {}
            host.runtime.scheduler.waitUntilIdle()
            time += 1.0 / 60
            host.runFrame(time: time, events: [])
        }
    }

    /// Runs one frame with `events` and nothing more.
    func frame(_ events: [InputEvent] = []) {
        time += 1.0 / 60
        host.runFrame(time: time, events: events)
    }

    func type(_ text: String) { send([.textInput(text)]) }

    func key(_ key: Key, _ modifiers: KeyModifiers = []) {
        send([.keyDown(key, modifiers: modifiers), .keyUp(key, modifiers: modifiers)])
    }

    /// Clicks `field` at `local` (its own coordinates).
    func click(_ field: EditableTextNode? = nil, at local: Point = Point(x: 5, y: 5)) {
        let field = field ?? self.field
        let point = Point(x: field.frame.minX + local.x, y: field.frame.minY + local.y)
        send([.pointerDown(point, button: 1), .pointerUp(point, button: 1)])
    }

    /// Removes the fields and lets the runtime finish their work.
    func tearDown() {
        host.setRootNode(nil)
        Runtime.shared.scheduler.waitUntilIdle()
        Runtime.shared.mainQueue.drain()
    }
}

/// Words separated by spaces, `length` UTF-16 units long, in one paragraph.
func longParagraph(_ length: Int) -> String {
    String(String(repeating: "lorem ipsum dolor sit amet ", count: length / 27 + 1).prefix(length))
}
