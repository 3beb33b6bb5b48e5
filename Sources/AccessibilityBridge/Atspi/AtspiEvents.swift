import NodeRuntime
import TesseraDBus

/// One AT-SPI event: a signal `(siiva{sv})` from an object's path on an `org.a11y.atspi.Event.*`
/// interface, which libatspi turns into `object:state-changed:focused`, `focus:`, … for the
/// screen reader.
/// - Thread: any (a value)
struct AtspiSignal: Hashable, Sendable {
    enum Value: Hashable, Sendable {
        case int(Int32)
        case string(String)
        case double(Double)
        case object(AtspiObject)
    }

    var object: AtspiObject
    var interface: String
    var member: String
    var detail: String
    var detail1: Int32 = 0
    var detail2: Int32 = 0
    var value: Value = .int(0)

    static func stateChanged(_ object: AtspiObject, _ state: AtspiState, _ isSet: Bool) -> AtspiSignal {
        AtspiSignal(object: object, interface: Atspi.eventObject, member: "StateChanged", detail: state.name,
                    detail1: isSet ? 1 : 0)
    }

    static func propertyChanged(_ object: AtspiObject, _ property: String, _ value: Value) -> AtspiSignal {
        AtspiSignal(object: object, interface: Atspi.eventObject, member: "PropertyChange", detail: property, value: value)
    }

    static func childrenChanged(_ parent: AtspiObject, added: Bool, index: Int, child: AtspiObject) -> AtspiSignal {
        AtspiSignal(object: parent, interface: Atspi.eventObject, member: "ChildrenChanged", detail: added ? "add" : "remove",
                    detail1: Int32(clamping: index), value: .object(child))
    }

    /// The signal's arguments for the bus: detail, detail1, detail2, the value in a variant, and no
    /// properties.
    func arguments(reference: (AtspiObject) -> DBusValue) -> [DBusValue] {
        let any: DBusValue
        switch value {
        case .int(let number): any = .int32(number)
        case .string(let text): any = .string(text)
        case .double(let number): any = .double(number)
        case .object(let object): any = reference(object)
        }
        return [.string(detail), .int32(detail1), .int32(detail2), .variant(any), .stringVariantDictionary([])]
    }
}

/// The events that tell a screen reader how one published tree became the next: elements added and
/// removed (`ChildrenChanged`), names, descriptions, roles, parents and values that changed
/// (`PropertyChange`), states that flipped (`StateChanged`), text inserted or deleted and carets moved
/// (`TextChanged`, `TextCaretMoved`, `TextSelectionChanged`), and the focus moving
/// (`StateChanged` "focused" off and on, then `Focus`), in that order.
///
/// Windows are matched by their element's id: a window that comes or goes is a `ChildrenChanged`
/// on the application, and each window's tree is compared with its own tree before.
/// Elements are matched by id. Only elements in both trees have their properties compared; a new
/// element's subtree is announced once, by the `ChildrenChanged` "add" on the parent both trees have.
/// A list's rows are counted, not matched: when its row count changes, the rows whose node came or
/// went are named where the trees show them, the rest at the end of the list.
enum AtspiEvents {
    /// The events from `old` to `new`: the windows that opened or closed (`ChildrenChanged` on the
    /// application; a new window's focus follows its "add"), then each window's changes, window by
    /// window. `changed` (nil: all) names the windows whose trees may differ; the others are not
    /// compared.
    static func signals(from old: AtspiSnapshot, to new: AtspiSnapshot, changed: Set<Int>? = nil) -> [AtspiSignal] {
        var result: [AtspiSignal] = []
        let opened = Set(new.windowIDs).subtracting(old.windowIDs)
        for signal in childChanges(of: .application, before: old.windowIDs, after: new.windowIDs) {
            result.append(signal)
            // A window that came: its focus right after it.
            if signal.detail == "add", case .object(.element(let id)) = signal.value, opened.contains(id),
               let focused = new.window(id: id)?.tree.focusedID {
                result += focusSignals(to: .element(focused))
            }
        }
        for window in new.windows where changed?.contains(window.id) ?? true {
            guard let before = old.window(id: window.id) else { continue }
            result += signals(from: before, to: window)
        }
        return result
    }

    /// The events from one window's tree to the next.
    static func signals(from old: AtspiSnapshot.Window, to new: AtspiSnapshot.Window) -> [AtspiSignal] {
        let oldTree = old.tree, newTree = new.tree
        var children: [AtspiSignal] = []
        var properties: [AtspiSignal] = []
        var states: [AtspiSignal] = []
        var texts: [AtspiSignal] = []
        // Depth first, in reading order, so the events come in the order the tree reads.
        for element in newTree.root.allElements {
            guard let before = old.entries[element.id], let after = new.entries[element.id] else { continue }
            let object = AtspiObject.element(element.id)
            if element.rowCount != nil || before.element.rowCount != nil {
                children += rowChanges(of: object, before: before, after: after)
            } else {
                children += childChanges(of: object, before: before.element.children.map(\.id),
                                         after: element.children.map(\.id))
            }
            properties += propertyChanges(of: object, before: before, after: after)
            let beforeStates = AtspiStateSet(element: before.element, isWindow: false, windowIsActive: false, isPlaceholder: false)
            let afterStates = AtspiStateSet(element: element, isWindow: false, windowIsActive: false, isPlaceholder: false)
            for change in beforeStates.changes(to: afterStates) where change.state != .focused {
                states.append(.stateChanged(object, change.state, change.isSet))
            }
            texts += textChanges(of: object, before: before.element.text, after: element.text)
        }
        var focus: [AtspiSignal] = []
        if oldTree.focusedID != newTree.focusedID {
            if let previous = oldTree.focusedID, new.entries[previous] != nil {
                focus.append(.stateChanged(.element(previous), .focused, false))
            }
            if let next = newTree.focusedID { focus += focusSignals(to: .element(next)) }
        }
        return children + properties + states + texts + focus
    }

    /// "focused" on, then the `Focus` event screen readers follow.
    static func focusSignals(to object: AtspiObject) -> [AtspiSignal] {
        [.stateChanged(object, .focused, true),
         AtspiSignal(object: object, interface: Atspi.eventFocus, member: "Focus", detail: "")]
    }

    /// The window gained or lost the keyboard focus: its ACTIVE state and `window:activate` or
    /// `window:deactivate`.
    static func windowActivation(window: Int, isActive: Bool) -> [AtspiSignal] {
        let object = AtspiObject.element(window)
        return [.stateChanged(object, .active, isActive),
                AtspiSignal(object: object, interface: Atspi.eventWindow, member: isActive ? "Activate" : "Deactivate",
                            detail: "", value: .string(""))]
    }

    private static func propertyChanges(of object: AtspiObject, before: AtspiSnapshot.Entry,
                                        after: AtspiSnapshot.Entry) -> [AtspiSignal] {
        var result: [AtspiSignal] = []
        let old = before.element, new = after.element
        if old.label != new.label { result.append(.propertyChanged(object, "accessible-name", .string(new.label))) }
        if (old.hint ?? "") != (new.hint ?? "") {
            result.append(.propertyChanged(object, "accessible-description", .string(new.hint ?? "")))
        }
        if old.role != new.role {
            result.append(.propertyChanged(object, "accessible-role", .int(Int32(bitPattern: new.role.atspiRole))))
        }
        if before.parent != after.parent { result.append(.propertyChanged(object, "accessible-parent", .object(after.parent))) }
        if let value = new.valueRange, old.valueRange?.current != value.current {
            result.append(.propertyChanged(object, "accessible-value", .double(value.current)))
        }
        return result
    }

    /// Removals (last first, so each index is right when it is applied) then additions (first first),
    /// which turn the old children into the new; children that changed places are removed and added.
    static func childChanges(of parent: AtspiObject, before: [Int], after: [Int]) -> [AtspiSignal] {
        guard before != after else { return [] }
        let afterSet = Set(after), beforeSet = Set(before)
        let remaining = before.filter { afterSet.contains($0) }
        let kept = after.filter { beforeSet.contains($0) }
        var result: [AtspiSignal] = []
        for (index, id) in before.enumerated().reversed() where !afterSet.contains(id) {
            result.append(.childrenChanged(parent, added: false, index: index, child: .element(id)))
        }
        if remaining != kept {
            // Reordered: take the rest away too and add every child in its new place.
            for (index, id) in remaining.enumerated().reversed() {
                result.append(.childrenChanged(parent, added: false, index: index, child: .element(id)))
            }
            return result + after.enumerated().map { .childrenChanged(parent, added: true, index: $0.offset, child: .element($0.element)) }
        }
        for (index, id) in after.enumerated() where !beforeSet.contains(id) {
            result.append(.childrenChanged(parent, added: true, index: index, child: .element(id)))
        }
        return result
    }

    /// A list's rows added or removed, by the change in its row count.
    private static func rowChanges(of list: AtspiObject, before: AtspiSnapshot.Entry, after: AtspiSnapshot.Entry) -> [AtspiSignal] {
        guard case .element(let listID) = list else { return [] }
        let oldCount = AtspiSnapshot.childCount(of: before.element), newCount = AtspiSnapshot.childCount(of: after.element)
        guard oldCount != newCount else { return [] }
        let oldRows = before.rows ?? [:], newRows = after.rows ?? [:]
        let oldIDs = Set(oldRows.values), newIDs = Set(newRows.values)
        func child(_ rows: [Int: Int], _ index: Int) -> AtspiObject {
            .element(rows[index] ?? AccessibilityElement.placeholderID(row: index, list: listID))
        }
        if newCount > oldCount {
            let added = newCount - oldCount
            // Where the rows went in: the first row whose node is new, else the end.
            let first = newRows.filter { !oldIDs.contains($0.value) }.keys.min() ?? oldCount
            let start = min(first, oldCount)
            return (start..<(start + added)).map { .childrenChanged(list, added: true, index: $0, child: child(newRows, $0)) }
        }
        let removed = oldCount - newCount
        var indexes = oldRows.filter { !newIDs.contains($0.value) }.keys.sorted().prefix(removed).map { $0 }
        var next = oldCount - 1
        while indexes.count < removed && next >= 0 {
            if !indexes.contains(next) { indexes.append(next) }
            next -= 1
        }
        return indexes.sorted(by: >).map { .childrenChanged(list, added: false, index: $0, child: child(oldRows, $0)) }
    }

    /// Text inserted or deleted (the span between the common start and end of the two strings, in
    /// Unicode scalars), the caret moved, the selection changed.
    static func textChanges(of object: AtspiObject, before: AccessibilityText?, after: AccessibilityText?) -> [AtspiSignal] {
        guard let before, let after else { return [] }
        var result: [AtspiSignal] = []
        if before.string != after.string {
            let old = Array(before.string.unicodeScalars), new = Array(after.string.unicodeScalars)
            var prefix = 0
            while prefix < old.count, prefix < new.count, old[prefix] == new[prefix] { prefix += 1 }
            var suffix = 0
            while suffix < old.count - prefix, suffix < new.count - prefix,
                  old[old.count - 1 - suffix] == new[new.count - 1 - suffix] { suffix += 1 }
            let deleted = old[prefix..<(old.count - suffix)], inserted = new[prefix..<(new.count - suffix)]
            func string(_ scalars: ArraySlice<Unicode.Scalar>) -> String {
                var view = String.UnicodeScalarView()
                view.append(contentsOf: scalars)
                return String(view)
            }
            if !deleted.isEmpty {
                result.append(AtspiSignal(object: object, interface: Atspi.eventObject, member: "TextChanged", detail: "delete",
                                          detail1: Int32(clamping: prefix), detail2: Int32(clamping: deleted.count),
                                          value: .string(string(deleted))))
            }
            if !inserted.isEmpty {
                result.append(AtspiSignal(object: object, interface: Atspi.eventObject, member: "TextChanged", detail: "insert",
                                          detail1: Int32(clamping: prefix), detail2: Int32(clamping: inserted.count),
                                          value: .string(string(inserted))))
            }
        }
        if before.caretOffset != after.caretOffset {
            result.append(AtspiSignal(object: object, interface: Atspi.eventObject, member: "TextCaretMoved", detail: "",
                                      detail1: Int32(clamping: after.caretOffset), value: .string("")))
        }
        if before.selection != after.selection {
            result.append(AtspiSignal(object: object, interface: Atspi.eventObject, member: "TextSelectionChanged",
                                      detail: "", value: .string("")))
        }
        return result
    }
}
