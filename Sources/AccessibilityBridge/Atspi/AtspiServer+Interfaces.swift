import Compositor
import FoundationEssentials
import Glibc
import Dispatch
import TesseraDBus
import NodeRuntime

// The element interfaces: Component (geometry), Action, Text, EditableText and Selection. Value is
// properties only (see `AtspiServer.property`).

extension AtspiServer {
    // MARK: Component

    /// The element's rectangle in `coordinates`: the screen (the window's origin added), the window,
    /// or its parent's rectangle; in the window system's units (screen pixels on X11).
    func extents(of target: Target, in coordinates: Atspi.CoordinateType) -> Rect {
        guard let element = target.element else { return .zero }
        let placement = self.placement(of: target)
        let scale = placement.unitsPerPoint.isFinite && placement.unitsPerPoint > 0 ? placement.unitsPerPoint : 1
        var frame = element.frame.sanitized
        frame = Rect(x: frame.minX * scale, y: frame.minY * scale, width: frame.width * scale, height: frame.height * scale)
        switch coordinates {
        case .screen:
            return frame.offsetBy(dx: placement.origin.x, dy: placement.origin.y)
        case .window:
            return frame
        case .parent:
            guard case .element(let parentID)? = target.parent, let parent = snapshot.entry(parentID)?.element else {
                return frame
            }
            let parentFrame = parent.frame.sanitized
            return frame.offsetBy(dx: -parentFrame.minX * scale, dy: -parentFrame.minY * scale)
        }
    }

    /// A point given in `coordinates` relative to `target`, in window points.
    private func windowPoint(x: Int, y: Int, in coordinates: Atspi.CoordinateType, of target: Target) -> Point {
        let placement = self.placement(of: target)
        let scale = placement.unitsPerPoint.isFinite && placement.unitsPerPoint > 0 ? placement.unitsPerPoint : 1
        var point = Point(x: Double(x), y: Double(y))
        switch coordinates {
        case .screen: point = Point(x: point.x - placement.origin.x, y: point.y - placement.origin.y)
        case .window: break
        case .parent:
            if case .element(let parentID)? = target.parent, let parent = snapshot.entry(parentID)?.element {
                let origin = parent.frame.sanitized.origin
                point = Point(x: point.x + origin.x * scale, y: point.y + origin.y * scale)
            }
        }
        return Point(x: point.x / scale, y: point.y / scale)
    }

    /// The deepest showing element under `point` (window points) inside `element`, the last drawn
    /// (the later sibling) first; nil when none of its descendants is there.
    func descendant(of element: AccessibilityElement, at point: Point) -> AccessibilityElement? {
        for child in element.children.reversed() where child.states.contains(.showing) {
            guard child.frame.sanitized.contains(point) else { continue }
            return descendant(of: child, at: point) ?? child
        }
        return nil
    }

    private static func rectangle(_ rect: Rect) -> [Int32] {
        func integer(_ value: Double) -> Int32 { value.isFinite ? Int32(clamping: Int(value.rounded())) : 0 }
        return [integer(rect.minX), integer(rect.minY), integer(rect.width), integer(rect.height)]
    }

    func component(_ member: String, _ arguments: AtspiArguments, _ target: Target) -> AtspiOutcome {
        guard let element = target.element else { return .error(.unknownInterface(Atspi.component, path: target.object.path)) }
        func coordinates(_ index: Int) -> Atspi.CoordinateType? { Atspi.CoordinateType(rawValue: arguments.uint(index)) }
        switch member {
        case "GetExtents":
            guard let type = coordinates(0) else { return .error(.invalidArguments("unknown coordinate type \(arguments.uint(0))")) }
            return .reply([.structure(Self.rectangle(extents(of: target, in: type)).map(DBusValue.int32))])
        case "GetPosition":
            guard let type = coordinates(0) else { return .error(.invalidArguments("unknown coordinate type \(arguments.uint(0))")) }
            let values = Self.rectangle(extents(of: target, in: type))
            return .reply([.int32(values[0]), .int32(values[1])])
        case "GetSize":
            let values = Self.rectangle(extents(of: target, in: .window))
            return .reply([.int32(values[2]), .int32(values[3])])
        case "Contains", "GetAccessibleAtPoint":
            guard let type = coordinates(2) else { return .error(.invalidArguments("unknown coordinate type \(arguments.uint(2))")) }
            let point = windowPoint(x: arguments.int(0), y: arguments.int(1), in: type, of: target)
            if member == "Contains" { return .reply([.boolean(element.frame.sanitized.contains(point))]) }
            let found = descendant(of: element, at: point)
            return .reply([found.map { reference(.element($0.id)) } ?? nullReference])
        case "GetLayer":
            return .reply([.uint32(snapshot.isWindow(target.object) ? Atspi.layerWindow : Atspi.layerWidget)])
        case "GetMDIZOrder":
            return .reply([.int16(0)])
        case "GetAlpha":
            return .reply([.double(1)])
        case "GrabFocus":
            return .needsUI(.focus(element: element.id)) { response in
                .reply([.boolean(response == .done(true))])
            }
        default:
            return .error(.unknownMethod(Atspi.component, member, path: target.object.path))
        }
    }

    // MARK: Action

    func action(_ member: String, _ arguments: AtspiArguments, _ target: Target) -> AtspiOutcome {
        let actions = target.element?.actions ?? []
        if member == "GetActions" {
            return .reply([.array(elementSignature: "(sss)", actions.map {
                .structure([.string($0.name), .string($0.atspiDescription), .string("")])
            })])
        }
        let index = arguments.int(0)
        guard index >= 0, index < actions.count, let element = target.element else {
            return .error(.invalidArguments("no action \(index): the element has \(actions.count)"))
        }
        let action = actions[index]
        switch member {
        case "GetName", "GetLocalizedName": return .reply([.string(action.name)])
        case "GetDescription": return .reply([.string(action.atspiDescription)])
        // Actions are reached with the keyboard through focus (Space, Enter), not keys of their own.
        case "GetKeyBinding": return .reply([.string("")])
        case "DoAction":
            return .needsUI(.perform(action, element: element.id)) { response in
                .reply([.boolean(response == .done(true))])
            }
        default:
            return .error(.unknownMethod(Atspi.action, member, path: target.object.path))
        }
    }

    // MARK: Text

    func text(_ member: String, _ arguments: AtspiArguments, _ target: Target) -> AtspiOutcome {
        guard let element = target.element, let text = element.text else {
            return .error(.unknownInterface(Atspi.text, path: target.object.path))
        }
        let segments = AtspiTextSegments(text.string)
        func piece(_ range: Range<Int>) -> AtspiOutcome {
            .reply([.string(segments.text(range)), .int32(Int32(clamping: range.lowerBound)),
                    .int32(Int32(clamping: range.upperBound))])
        }
        switch member {
        case "GetText":
            let start = max(0, arguments.int(0))
            let requestedEnd = arguments.int(1)
            let end = requestedEnd < 0 ? segments.count : min(requestedEnd, segments.count)
            return .reply([.string(start < end ? segments.text(start..<end) : "")])
        case "GetCharacterAtOffset":
            let offset = arguments.int(0)
            guard offset >= 0, offset < segments.count else { return .reply([.int32(0)]) }
            return .reply([.int32(Int32(bitPattern: segments.scalars[offset].value))])
        case "GetTextAtOffset", "GetTextBeforeOffset", "GetTextAfterOffset":
            guard let boundary = Atspi.TextBoundary(rawValue: arguments.uint(1)) else {
                return .error(.invalidArguments("unknown text boundary \(arguments.uint(1))"))
            }
            let shift = member == "GetTextAtOffset" ? 0 : member == "GetTextBeforeOffset" ? -1 : 1
            return piece(segments.segment(boundary, at: arguments.int(0), shift: shift))
        case "GetStringAtOffset":
            guard let granularity = Atspi.TextGranularity(rawValue: arguments.uint(1)) else {
                return .error(.invalidArguments("unknown text granularity \(arguments.uint(1))"))
            }
            return piece(segments.piece(granularity, at: arguments.int(0)))
        case "GetNSelections":
            return .reply([.int32(text.selection?.isEmpty == false ? 1 : 0)])
        case "GetSelection":
            // No such selection: an empty range at 0, as ATK's toolkits answer (screen readers ask for
            // selection 0 without counting first).
            guard arguments.int(0) == 0, let selection = text.selection, !selection.isEmpty else {
                return .reply([.int32(0), .int32(0)])
            }
            return .reply([.int32(Int32(clamping: selection.lowerBound)), .int32(Int32(clamping: selection.upperBound))])
        case "GetAttributes", "GetAttributeRun":
            // The tree carries no text attributes (fonts, colours): the text is one run without any.
            return .reply([.stringDictionary([:]), .int32(0), .int32(Int32(clamping: segments.count))])
        case "GetDefaultAttributes", "GetDefaultAttributeSet":
            return .reply([.stringDictionary([:])])
        case "GetAttributeValue":
            return .reply([.string("")])
        case "SetCaretOffset", "SetSelection", "AddSelection", "RemoveSelection":
            guard text.isEditable else { return .reply([.boolean(false)]) }
            let range: Range<Int>
            switch member {
            case "SetCaretOffset": range = arguments.int(0)..<arguments.int(0)
            case "SetSelection":
                guard arguments.int(0) == 0 else { return .reply([.boolean(false)]) }
                range = Self.ordered(arguments.int(1), arguments.int(2))
            case "AddSelection": range = Self.ordered(arguments.int(0), arguments.int(1))
            default:
                guard arguments.int(0) == 0, text.selection?.isEmpty == false else { return .reply([.boolean(false)]) }
                range = text.caretOffset..<text.caretOffset
            }
            let clamped = range.clamped(to: 0..<segments.count)
            return .needsUI(.select(element: element.id, range: clamped)) { response in
                .reply([.boolean(response == .done(true))])
            }
        default:
            return .error(.unknownMethod(Atspi.text, member, path: target.object.path))
        }
    }

    private static func ordered(_ a: Int, _ b: Int) -> Range<Int> {
        let low = max(0, min(a, b)), high = max(0, max(a, b))
        return low..<high
    }

    // MARK: EditableText

    func editableText(_ member: String, _ arguments: AtspiArguments, _ target: Target) -> AtspiOutcome {
        guard let element = target.element, let text = element.text, text.isEditable else {
            return .error(.unknownInterface(Atspi.editableText, path: target.object.path))
        }
        let count = text.string.unicodeScalars.count
        let request: AtspiUIRequest
        switch member {
        case "SetTextContents":
            request = .replaceText(element: element.id, range: nil, text: arguments.string(0))
        case "InsertText":
            // `length` counts characters of `text` to insert; negative (or past its end) means all of it.
            let inserted = arguments.string(1)
            let length = arguments.int(2)
            let scalars = inserted.unicodeScalars
            let used = length < 0 || length >= scalars.count
                ? inserted : String(String.UnicodeScalarView(scalars.prefix(length)))
            let position = min(max(0, arguments.int(0)), count)
            request = .replaceText(element: element.id, range: position..<position, text: used)
        case "DeleteText":
            let start = arguments.int(0), requestedEnd = arguments.int(1)
            let end = requestedEnd < 0 ? count : requestedEnd
            request = .replaceText(element: element.id, range: Self.ordered(start, end).clamped(to: 0..<count), text: "")
        default:
            return .error(.unknownMethod(Atspi.editableText, member, path: target.object.path))
        }
        // An edit from the bus is bounded: a field's text is laid out on the UI thread, and any peer
        // on the accessibility bus may send one.
        if case let .replaceText(_, range, inserted) = request {
            let added = inserted.unicodeScalars.count
            let removed = range.map(\.count) ?? count
            if added > Atspi.maximumEditCharacters || (added > removed && count - removed + added > Atspi.maximumEditedTextCharacters) {
                return .error(.limitsExceeded("an edit through AT-SPI inserts at most \(Atspi.maximumEditCharacters) characters "
                                              + "and leaves a field at most \(Atspi.maximumEditedTextCharacters) long; this one "
                                              + "inserts \(added) into \(count)"))
            }
        }
        return .needsUI(request) { response in .reply([.boolean(response == .done(true))]) }
    }

    // MARK: Selection

    /// The selected children of a list (its rows with a node that are selected) or a tab list.
    func selectedChildren(of target: Target) -> [AccessibilityElement] {
        guard let element = target.element else { return [] }
        let children = target.rows != nil ? element.children.sorted { ($0.rowIndex ?? 0) < ($1.rowIndex ?? 0) } : element.children
        return children.filter { $0.states.contains(.selected) }
    }

    func selection(_ member: String, _ arguments: AtspiArguments, _ target: Target) -> AtspiOutcome {
        let index = arguments.int(0)
        switch member {
        case "GetSelectedChild":
            let selected = selectedChildren(of: target)
            guard index >= 0, index < selected.count else { return .reply([nullReference]) }
            return .reply([reference(.element(selected[index].id))])
        case "IsChildSelected":
            guard case .element(let id)? = snapshot.child(of: target.object, at: index),
                  let child = snapshot.entry(id)?.element ?? placeholders[id] else { return .reply([.boolean(false)]) }
            return .reply([.boolean(child.states.contains(.selected))])
        case "SelectChild":
            // A list selects a row as activating it does (`onSelectRow`); a tab list, its tab.
            guard case .element(let id)? = snapshot.child(of: target.object, at: index) else { return .reply([.boolean(false)]) }
            return .needsUI(.perform(.press, element: id)) { response in .reply([.boolean(response == .done(true))]) }
        default:
            return .error(.unknownMethod(Atspi.selection, member, path: target.object.path))
        }
    }
}
