import Tessera

/// A screen controller whose content is one list. The list joins its host's frames by itself while
/// it is shown, so it scrolls and moves its rows through the interface states every frame; keys that
/// no focused node uses scroll it. Each screen sets itself as the list's data source.
/// - Thread: main
@MainActor
class ListScreenController: NodeController {
    let list: ListNode

    /// A controller showing `node` (the list itself, or a screen that holds it), with the list named
    /// `debugName` for diagnostics, filled with `backgroundColor` where no row is, and rows estimated
    /// `estimatedRowHeight` points tall until measured.
    init(list: ListNode, node: Node, debugName: String, backgroundColor: ThemeColor, estimatedRowHeight: Double) {
        self.list = list
        super.init(node: node)
        list.debugName = debugName
        list.themedBackgroundColor = backgroundColor
        list.estimatedRowHeight = estimatedRowHeight
    }

    override func handleKey(_ key: Key, modifiers: KeyModifiers) -> Bool {
        list.handleKey(key, modifiers: modifiers)
    }
}

/// A screen made of a list and a bar that stays put above or below it (the Chats screen's search
/// bar, a thread's composer): the bar takes its own height and the list the rest.
///
/// The subnodes are in the order they appear from the top, so Tab reaches a bar above the list
/// before the list's rows, and a bar below after them. An optional `header` (a thread's navigation
/// bar) sits over everything, `NavigationBarNode.height` tall.
final class BarListScreenNode<Bar: Node>: Node, @unchecked Sendable {
    enum BarPosition: Sendable {
        case top, bottom
    }

    let bar: Bar
    let list: ListNode
    let barPosition: BarPosition
    let header: Node?

    init(list: ListNode, bar: Bar, at barPosition: BarPosition, header: Node? = nil) {
        self.list = list
        self.bar = bar
        self.barPosition = barPosition
        self.header = header
        super.init()
        let ordered: [Node] = barPosition == .top ? [bar, list] : [list, bar]
        ([header].compactMap { $0 } + ordered).forEach { addSubnode($0) }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        let barSpec = bar.flexShrink(0)
        let listSpec = list.flexGrow(1).flexShrink(1)
        var children: [any LayoutElement] = []
        if let header { children.append(header.height(.points(NavigationBarNode.height)).flexShrink(0)) }
        switch barPosition {
        case .top: children += [barSpec, listSpec]
        case .bottom: children += [listSpec, barSpec]
        }
        return StackSpec(direction: .vertical, children: children)
    }
}
