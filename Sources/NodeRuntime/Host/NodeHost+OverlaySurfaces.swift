import Compositor

// Popups and tooltips drawn on surfaces of their own (`OverlaySurfaceProvider`): each frame the host
// places the surfaces where their overlays' content is (after layout), draws them after its own window,
// and routes their input as its own, in window points.

extension Overlay {
    /// Whether the content is placed on the screen and drawn on a surface of its own: a popup or a
    /// tooltip placed by a positioner, on a host whose provider can make surfaces now, unless making
    /// one failed. A modal overlay, or one filling the window, stays in the window. - Thread: main
    func drawsOnSurface(in host: NodeHost) -> Bool {
        kind != .modal && positioner != nil && !surfaceFailed && host.overlaySurfaceProvider?.screenBounds != nil
    }
}

extension NodeHost {
    /// Makes, moves and fills the surfaces of the overlays drawn on one, after layout: a surface covers
    /// its overlay's content frame, and shows the content's layer, which the window no longer draws.
    func updateOverlaySurfaces() {
        let screen = overlaySurfaceProvider?.screenBounds
        for overlay in overlayStack where overlay.surface != nil || overlay.drawsOnSurface(in: self) {
            // The window moved (or its screen changed) under a popup shown: placed again against the
            // screen as it is now, and its surface moved with the window even where its frame in the
            // window's points stays.
            let screenMoved = overlay.surface != nil && screen != nil && screen != overlay.surfaceScreenBounds
            if screenMoved {
                overlay.container.setNeedsLayout()
                overlay.container.layoutIfNeeded()
            }
            let frame = overlay.content.frame
            // Not measured yet: the surface is made once the content has a size.
            guard frame.width > 0, frame.height > 0, let layer = overlay.content.layerIfLoaded else { continue }
            if overlay.surface == nil {
                guard let surface = overlaySurfaceProvider?.makeSurface(kind: overlay.kind, frame: frame) else {
                    TesseraLog.app.warning("a \(overlay.kind) overlay could not get a surface of its own: drawn in the window")
                    overlay.surfaceFailed = true
                    overlay.container.setNeedsLayout()
                    overlay.container.layoutIfNeeded()
                    continue
                }
                overlay.surface = surface
                overlay.surfaceRootLayer = Layer(name: "overlay surface")
            } else if frame != overlay.surfaceFrame || screenMoved {
                overlay.surface?.setFrame(frame)
            }
            overlay.surfaceScreenBounds = screen
            if frame != overlay.surfaceFrame {
                overlay.surfaceFrame = frame
                // The root's origin is the window's, as the host's root layer's is (`Layer.frameInWindow`):
                // the content, at its window frame inside it, lands at the surface's top-left corner.
                // It does not clip, so its size does not matter.
                overlay.surfaceRootLayer?.frame = Rect(x: -frame.minX, y: -frame.minY, width: 0, height: 0)
            }
            // Taken out of the container's layer (the window's tree); nothing puts it back while the
            // content stays the container's subnode.
            if let root = overlay.surfaceRootLayer, layer.superlayer !== root {
                layer.removeFromSuperlayer()
                _ = root.addSublayer(layer)
            }
        }
    }

    /// Draws the surfaces whose layers changed, after the window's frame; a surface at rest presents
    /// nothing.
    func renderOverlaySurfaces(at time: Double) {
        for overlay in overlayStack {
            guard let surface = overlay.surface, let root = overlay.surfaceRootLayer else { continue }
            surface.compositor.renderIfChanged(root, at: time)
        }
    }

    /// The input the surfaces read, top surface last, in window points. Only the pointer, the wheel,
    /// keys (where a surface holds the keyboard focus) and the focus leaving the application count:
    /// the window's size and closing are the window's own, which a surface does not speak for.
    ///
    /// `windowEvents` are the window's own events of the frame: a surface's word that the pointer left
    /// it is dropped when the pointer went into the window, which says where it is now (the two
    /// windows' events are read apart, so their order is lost).
    func takeOverlaySurfaceEvents(after windowEvents: [InputEvent]) -> [InputEvent] {
        let pointerInWindow = windowEvents.contains { event in
            switch event {
            case .pointerMoved, .pointerDown, .pointerUp: return true
            default: return false
            }
        }
        var taken: [InputEvent] = []
        for overlay in overlayStack {
            guard let surface = overlay.surface, let origin = overlay.surfaceFrame?.origin else { continue }
            for event in surface.takeEvents() {
                // Under a modal window, the user's presses, keys and text on a menu of the window reach
                // nothing; the wheel still scrolls it (its window's thread may have moved the scroll already).
                if isInputBlocked && event.isUserInput, !Self.isWheel(event) { continue }
                func moved(_ point: Point) -> Point { Point(x: point.x + origin.x, y: point.y + origin.y) }
                switch event {
                case let .pointerMoved(point): taken.append(.pointerMoved(moved(point)))
                case let .pointerDown(point, button, clicks):
                    taken.append(.pointerDown(moved(point), button: button, clicks: clicks))
                case let .pointerUp(point, button): taken.append(.pointerUp(moved(point), button: button))
                case .pointerLeftWindow: if !pointerInWindow { taken.append(event) }
                case .wheel, .keyDown, .keyUp, .textInput, .textEditing, .windowFocusChanged(false):
                    taken.append(event)
                default: break
                }
            }
        }
        return taken
    }

    private static func isWheel(_ event: InputEvent) -> Bool {
        if case .wheel = event { return true }
        return false
    }

    /// True when a surface has input waiting or layers to draw. - Thread: main
    var overlaySurfacesNeedFrame: Bool {
        overlayStack.contains { overlay in
            guard let surface = overlay.surface else { return false }
            return surface.hasPendingEvents || surface.compositor.needsRender(overlay.surfaceRootLayer)
        }
    }

    /// Closes `overlay`'s surface, if it has one; the content's layer leaves it.
    func closeSurface(of overlay: Overlay) {
        guard let surface = overlay.surface else { return }
        if let root = overlay.surfaceRootLayer, let layer = overlay.content.layerIfLoaded, layer.superlayer === root {
            layer.removeFromSuperlayer()
        }
        overlay.surface = nil
        overlay.surfaceRootLayer = nil
        overlay.surfaceFrame = nil
        surface.close()
    }
}

extension Layer {
    /// The frame in the window's points: `frameInRoot` less the top layer's origin, which is the
    /// window's. They differ for a layer shown on an overlay's surface, whose root sits at minus the
    /// surface's place in the window. - Thread: main
    var frameInWindow: Rect {
        var top = self
        while let parent = top.superlayer { top = parent }
        let origin = top.frame.sanitized.origin
        return frameInRoot.offsetBy(dx: -origin.x, dy: -origin.y)
    }
}
