public import Compositor

/// What a node does with files and text dragged over it from another application and dropped on it
/// (a file manager's files, a browser's text): set on the node as `Node.dropTarget`.
///
/// ```swift
/// composer.dropTarget = DropTarget(accepting: .files) { items, _ in
///     attach(items.files)        // true: taken
///     return true
/// }
/// composer.dropTarget?.onTargetedChange = { targeted in composer.isHighlighted = targeted }
/// ```
///
/// The node under the drag (or the nearest node around it that has a drop target) is targeted while
/// the drag is over it: `isTargeted` turns true and `onTargetedChange` hears it, so the node can show
/// it takes the drop; it turns false when the drag moves away, leaves the window or is dropped. A
/// drop on it calls `onDrop` with the items it accepts (`acceptedKinds`; a drop with none of them
/// goes on outwards) and the point in the node's coordinates. Where the platform does not say where
/// a drag is before the drop (Wayland, and any drop SDL reports alone), only the drop comes: at the
/// pointer's place, or, when the platform does not say that either, to the focused node's target,
/// then the root's. Under a modal overlay only the targets in it take drops (a place-less drop goes
/// to the focused node in it, else its content); under a modal window, none.
/// - Thread: main, every member.
@MainActor
public final class DropTarget {
    /// Kinds of dropped things. - Thread: any (a value)
    public struct Kinds: OptionSet, Sendable, Hashable {
        /// The kinds' bits. - Thread: any
        public let rawValue: Int
        /// The kinds whose bits are `rawValue`. - Thread: any
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Local files, by path. - Thread: any
        public static let files = Kinds(rawValue: 1 << 0)
        /// Text. - Thread: any
        public static let text = Kinds(rawValue: 1 << 1)
        /// Files and text. - Thread: any
        public static let all: Kinds = [.files, .text]
    }

    /// What the target takes; a drop's other items are left out, and a drop of none of these goes on
    /// to the targets around this one.
    public var acceptedKinds: Kinds
    /// Called with the accepted items and the point (the node's coordinates) of a drop; returns
    /// whether it took them (false lets the targets around this one have the drop).
    public var onDrop: ([DroppedItem], Point) -> Bool
    /// Called when a drag starts or stops being over the node (`isTargeted`).
    public var onTargetedChange: ((Bool) -> Void)?
    /// True while a drag from another application is over the node (or over a node inside it with no
    /// target of its own).
    public internal(set) var isTargeted = false {
        didSet { if isTargeted != oldValue { onTargetedChange?(isTargeted) } }
    }

    /// A target taking `acceptedKinds`, whose drops go to `onDrop`.
    public init(accepting acceptedKinds: Kinds = .all, onDrop: @escaping ([DroppedItem], Point) -> Bool) {
        self.acceptedKinds = acceptedKinds
        self.onDrop = onDrop
    }

    /// The items of `items` this target takes.
    func accepted(_ items: [DroppedItem]) -> [DroppedItem] {
        items.filter {
            switch $0 {
            case .file: return acceptedKinds.contains(.files)
            case .text: return acceptedKinds.contains(.text)
            }
        }
    }
}

extension Array where Element == DroppedItem {
    /// The paths of the dropped files, in order. - Thread: any
    public var files: [String] { compactMap { if case let .file(path) = $0 { return path } else { return nil } } }
    /// The dropped texts, in order. - Thread: any
    public var texts: [String] { compactMap { if case let .text(text) = $0 { return text } else { return nil } } }
}

extension Node {
    /// What this node does with files and text dropped on it from other applications (see
    /// `DropTarget`); nil (the default): drops go on to the nodes around it. Setting one makes the
    /// node take input (`isUserInteractionEnabled`), so that a drag over it finds it. - Thread: main
    @MainActor
    public var dropTarget: DropTarget? {
        get { dropTargetStorage }
        set {
            // The target replaced (or taken away) is no longer under a drag; a new one is targeted by
            // the drag's next place.
            if newValue !== dropTargetStorage { dropTargetStorage?.isTargeted = false }
            dropTargetStorage = newValue
            if newValue != nil { isUserInteractionEnabled = true }
        }
    }
}

extension NodeHost {
    /// The nodes with a drop target from the node under `point` (window points) outwards.
    private func dropTargets(at point: Point?) -> [Node] {
        var node: Node?
        if let point {
            node = hitNode(at: point)
        } else if let modal = overlayStack.last(where: { $0.kind == .modal }) {
            // A place-less drop under a modal overlay: the focused node in it, else its content.
            node = focusedNode.flatMap { modal.container.isAncestor(of: $0) ? $0 : nil } ?? modal.content
        } else {
            node = focusedNode ?? rootNode
        }
        var chain: [Node] = []
        while let current = node {
            if current.dropTargetStorage != nil { chain.append(current) }
            node = current.eventSupernode
        }
        if point == nil, let root = rootNode, root.dropTargetStorage != nil, !chain.contains(where: { $0 === root }) {
            chain.append(root)
        }
        // Nothing behind a modal overlay (or under a modal window) takes a drop.
        return chain.filter { !isBehindModalOverlay($0) }
    }

    /// A drag from another application is at `point`: the nearest target there is targeted.
    func dragMoved(to point: Point) {
        // Under a modal window nothing is targeted (a move read before the window was blocked included).
        guard !isInputBlocked else { return dragEnded() }
        dragLocation = point
        dragChangeCount = Layer.changeCount
        let target = dropTargets(at: point).first?.dropTargetStorage
        // The target itself is kept: its node may have been let go, or given another target, since.
        if let current = draggedOver, current !== target { current.isTargeted = false }
        draggedOver = target
        target?.isTargeted = true
    }

    /// The drag left the window or was given up.
    func dragEnded() {
        draggedOver?.isTargeted = false
        draggedOver = nil
        dragLocation = nil
    }

    /// Content that moved or went away under a drag that has not moved (XDND tells a drag's place
    /// only as it moves) changes what it targets, as it changes what the pointer hovers: looked at
    /// again once a frame's events are routed, when the layers changed since the last look.
    func updateDragTarget() {
        guard let dragLocation, Layer.changeCount != dragChangeCount else { return }
        dragMoved(to: dragLocation)
    }

    /// A drop of `items` at `point`: the targets from the node under it outwards are offered the
    /// items each accepts, until one takes them.
    func drop(_ items: [DroppedItem], at point: Point?) {
        dragEnded()
        for node in dropTargets(at: point) {
            guard let target = node.dropTargetStorage else { continue }
            let accepted = target.accepted(items)
            guard !accepted.isEmpty else { continue }
            let local = point.map { node.convertFromRoot($0) } ?? Point(x: node.bounds.midX, y: node.bounds.midY)
            if target.onDrop(accepted, local) { return }
        }
    }
}
