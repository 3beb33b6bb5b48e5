import Tessera

// Tabs: a `TabController` shows one screen at a time above a tab bar the app builds from nodes. Here
// the bar is two buttons; a tap selects a tab, and `selectionDidChange` marks the shown one. The
// notes tab is a `NavigationController`, so a tapped row can push its note.

let notes = (1...200).map { Note(title: "Note \($0)", body: "Written on day \($0 % 28 + 1).") }
let navigation = NavigationController(rootController: NotesController(notes: notes))
let photos = PhotosController()

let buttons = [ButtonNode(title: "Notes"), ButtonNode(title: "Photos")]
let tabBar = TabBarNode(buttons: buttons)
let tabs = TabController(controllers: [navigation, photos], tabBar: tabBar, tabBarHeight: 48)
for (index, button) in buttons.enumerated() {
    button.addTarget(for: .primaryActionTriggered) { _, _ in tabs.select(index) }
}
tabs.selectionDidChange = { selected in
    for (index, button) in buttons.enumerated() { button.isSelected = index == selected }
}
buttons[0].isSelected = true

Application.run(.init(title: "Tour")) { tabs }

/// The tab bar: the buttons side by side, each as wide as the other.
final class TabBarNode: Node, @unchecked Sendable {
    let buttons: [ButtonNode]

    init(buttons: [ButtonNode]) {
        self.buttons = buttons
        super.init()
        backgroundColor = Color(rgb: 0xF0F0F0)
        for button in buttons { addSubnode(button) }
    }

    override func layoutSpecThatFits(_ constrainedSize: SizeRange) -> (any LayoutSpec)? {
        HStack(alignItems: .stretch) { buttons.map { $0.flexGrow(1).flexBasis(.points(0)) } }
    }
}
