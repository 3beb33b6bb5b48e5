public import Compositor

extension Node {
    /// The colour `name` has in the runtime's theme and the current appearance, and a note that this
    /// node depends on colours: when the appearance or the theme changes them, the node's
    /// `appearanceDidChange(_:)` runs (by default it draws again). Call it where the colour is used —
    /// in `drawParameters()`, or where a subnode's colour is set — and the node follows light, dark
    /// and high contrast by itself.
    /// - Thread: any
    public func themeColor(_ name: ThemeColor) -> Color {
        runtime.appearanceDependents.add(self, aspects: .colors)
        return runtime.resolveColor(name)
    }

    /// The theme colour of the node's background: sets `backgroundColor` to its colour now and again
    /// whenever the appearance or the theme changes it. Nil (the default) leaves `backgroundColor` as
    /// it is set; setting `backgroundColor` itself does not clear this.
    /// - Thread: any
    public var themedBackgroundColor: ThemeColor? {
        get { runtime.appearanceDependents.background(of: self) }
        set {
            runtime.appearanceDependents.setBackground(newValue, of: self)
            if let newValue { backgroundColor = runtime.resolveColor(newValue) }
        }
    }

    /// Records that this node depends on `aspects` of the appearance, so that its
    /// `appearanceDidChange(_:)` runs when they change: for a node that reads `appearance` itself (a
    /// size from the text scale, a motion it leaves out). `themeColor(_:)` records `.colors` by itself,
    /// and text nodes `.textScale`.
    /// - Thread: any
    public func dependOnAppearance(_ aspects: AppearanceChange) {
        runtime.appearanceDependents.add(self, aspects: aspects)
    }

    /// What this node depends on (as recorded so far). - Thread: any
    public var appearanceDependencies: AppearanceChange { runtime.appearanceDependents.aspects(of: self) }

    /// What `appearanceDidChange(_:)` does unless a subclass does otherwise: takes the background's
    /// theme colour again and, for colours, draws again.
    @MainActor
    func applyAppearanceChange(_ change: AppearanceChange) {
        guard change.contains(.colors) else { return }
        if let name = runtime.appearanceDependents.background(of: self) {
            backgroundColor = runtime.resolveColor(name)
        }
        if drawsContents { setNeedsDisplay() }
    }
}
