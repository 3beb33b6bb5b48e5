public import Compositor

extension NodeHost {
    /// The window's menu bar: shown across the top of the window, above the root, which gets the rest
    /// of the window (`contentBounds`). Its menus open by click, F10 or Alt and an initial, and its
    /// items' shortcuts run while the menus are closed (see `MenuBarNode`). Nil (the default): none,
    /// and the root fills the window.
    ///
    /// ```swift
    /// host.menuBar = MenuBarNode(menus: [file, edit, view, help])
    /// ```
    /// - Thread: main
    public var menuBar: MenuBarNode? {
        get { windowMenuBar }
        set {
            UIThread.precondition("NodeHost.menuBar")
            guard newValue !== windowMenuBar else { return }
            if let old = windowMenuBar {
                old.setInterfaceState([])
                old.layerIfLoaded?.removeFromSuperlayer()
                old.rootHost = nil
            }
            windowMenuBar = newValue
            if let bar = newValue {
                Contract.require(bar.supernode == nil && bar.nodeHost == nil, "NodeHost.menuBar: the bar is in a tree already")
                bar.rootHost = self
                bar.contentsScale = compositor.scale
                bar.frame = menuBarFrame
                bar.enterInterfaceState(.onScreen) {
                    // Above the root, below the overlays.
                    let index = rootNode?.layerIfLoaded.flatMap { layer in rootLayer.sublayers.firstIndex { $0 === layer } }
                    rootLayer.insertSublayer(bar.layer, at: index.map { $0 + 1 } ?? 0)
                    bar.layoutIfNeeded()
                }
            }
            viewportDidChange()
            runtime.noteAccessibilityChange()
        }
    }

    /// Where the root goes: the window below the menu bar (all of it without one), in window points.
    /// - Thread: main
    public var contentBounds: Rect {
        let bar = windowMenuBar == nil ? 0 : min(MenuBarNode.height, viewportSize.height)
        return Rect(x: 0, y: bar, width: viewportSize.width, height: max(0, viewportSize.height - bar))
    }

    var menuBarFrame: Rect {
        Rect(x: 0, y: 0, width: viewportSize.width, height: min(MenuBarNode.height, viewportSize.height))
    }

    /// Lays the menu bar out for the window's width, when its layout is out of date.
    func layOutMenuBar() {
        guard let bar = windowMenuBar else { return }
        let frame = menuBarFrame
        if bar.frame != frame { bar.frame = frame }
        if !bar.hasCachedLayout(for: .exactly(frame.size)) { bar.layoutIfNeeded() }
    }

    var menuBarNeedsLayout: Bool {
        guard let bar = windowMenuBar else { return false }
        return !bar.hasCachedLayout(for: .exactly(bar.frame.size))
    }
}
