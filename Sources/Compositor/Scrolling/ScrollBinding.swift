/// A scroll the compositor thread may drive itself: a list's (or scroll node's) content layer says
/// how (`Layer.scrollBinding`), with the owner's motion as a value (`track`).
///
/// One owner at a time. Between the UI thread's frames the compositor thread draws the owner's
/// motion (`track`, a closed form of time). When the wheel turns over the scroll, or a press lands on
/// it while it moves, and nothing else under the pointer would take that input on the UI thread
/// (see `LayerInputRole`), the compositor thread applies the event to its copy of the motion with the
/// same functions the owner uses (`ScrollTrack.applyWheel`, `.stop`), draws that from then on — the
/// glide after a burst of wheel events included — and hands the result back with the event
/// (`CompositorThread.ScrollUpdate`). The UI thread takes that motion over as it is, never computing
/// its own for those events, and says so in its next snapshot (`handoff` unchanged, the events taken
/// in): from then on the compositor thread follows the snapshot again. A motion the UI thread starts
/// itself (a scroll from code, a drag, keys, new rows moving the content) counts up `handoff`, and a
/// snapshot with a new `handoff` takes the scroll back from the compositor thread.
/// - Thread: any (a value)
public struct ScrollBinding: Sendable, Hashable {
    /// The scrolling layer's window rectangle at the time of the snapshot (its viewport, in points):
    /// the wheel moves it while the pointer is inside.
    public var viewport: Rect
    /// The content offset where the layer's y is 0; the layer's y is `-(offset - origin)`.
    public var origin: Double
    /// The smallest and largest offsets the wheel may reach.
    public var lower: Double
    public var upper: Double
    /// Points per wheel step.
    public var wheelStep: Double
    /// The layer scrolls along x (a horizontal list): the wheel's horizontal motion moves it, or its
    /// vertical motion where there is none, as the list itself takes them; its x is `-(offset - origin)`.
    public var isHorizontal: Bool
    /// The owner's motion at its last frame; nil: at rest where the layer is drawn.
    public var track: ScrollTrack?
    /// Counts the owner's own changes of its motion (anything but running it in time and taking over
    /// the compositor thread's): a new value takes the scroll back from the compositor thread.
    public var handoff: Int
    /// At an edge, the wheel passes on to the scroll outside (a scroll node) instead of stopping
    /// there (a list).
    public var passesWheelAtEdges: Bool
    /// The scroll also moves along the other axis, on the UI thread (a scroll node that scrolls both
    /// ways binds one): wheel motion along that axis goes to the UI thread.
    public var otherAxisOnUIThread: Bool

    public init(viewport: Rect, origin: Double = 0, lower: Double, upper: Double, wheelStep: Double,
                isHorizontal: Bool = false, track: ScrollTrack? = nil, handoff: Int = 0,
                passesWheelAtEdges: Bool = false, otherAxisOnUIThread: Bool = false) {
        self.otherAxisOnUIThread = otherAxisOnUIThread
        self.isHorizontal = isHorizontal
        self.viewport = viewport
        self.origin = origin.isFinite ? origin : 0
        self.lower = lower.isFinite ? lower : 0
        self.upper = upper.isFinite ? max(self.lower, upper) : self.lower
        self.wheelStep = wheelStep.isFinite ? wheelStep : 0
        self.track = track?.forBinding
        self.handoff = handoff
        self.passesWheelAtEdges = passesWheelAtEdges
    }

    /// The motion at `time` as the owner left it: its track, or a scroll at rest where `layer` is
    /// drawn then.
    func ownerTrack(for layer: LayerSnapshot, at time: Double) -> ScrollTrack {
        if var track {
            track.lower = lower
            track.upper = upper
            return track
        }
        let presented = layer.presentedFrame(at: time)
        let offset = origin - (isHorizontal ? presented.minX : presented.minY)
        return .resting(at: offset, time: time, lower: lower, upper: upper)
    }
}

extension ScrollTrack {
    /// The track as a binding carries it: at rest, its time and wheel samples say nothing, so a
    /// scroll at rest binds the same from frame to frame (and makes no new snapshot).
    var forBinding: ScrollTrack {
        guard motion.isAtRest else { return self }
        var copy = self
        copy.time = 0
        copy.wheelSamples = []
        return copy
    }
}

/// What a layer's node does with the pointer and the wheel, for a compositor thread that routes them
/// before the UI thread sees them: it moves a bound scroll (`ScrollBinding`) only where the UI thread
/// would send the event to that scroll, and leaves the event to the UI thread wherever something
/// else takes it.
///
/// The compositor thread finds the frontmost layer under the pointer that `takesPointer` (as the UI
/// thread's hit test finds the frontmost interactive node: hidden, transparent and clipped-away
/// layers are skipped), then walks out through its superlayers: the first bound scroll that takes
/// the wheel's axis is the one it moves; a layer that `handlesWheel` first (a paging list, a
/// carousel, a node with its own wheel handling) sends the event to the UI thread, and so does a
/// pointer over nothing that takes it. A node's layer is tested where the node is (`frame`,
/// `isHittable`), as the UI thread tests nodes, not where an animation shows it meanwhile (a screen
/// sliding in is hit where it is going).
/// - Thread: any (a value)
public struct LayerInputRole: Sendable, Hashable {
    /// The layer's node takes the pointer (an interactive node), within its bounds less the insets
    /// (negative insets enlarge, as a node's `hitTestSlop`).
    public var takesPointer: Bool
    public var hitInsetTop: Double
    public var hitInsetLeft: Double
    public var hitInsetBottom: Double
    public var hitInsetRight: Double
    /// The layer's node handles the wheel on the UI thread (a `WheelScrollable` the compositor cannot
    /// move by itself).
    public var handlesWheel: Bool
    /// The node's frame in its superlayer, where the UI thread hit-tests it; nil: the layer's own
    /// (a layer without a node).
    public var frame: Rect?
    /// False when the node is hidden or fully transparent: the UI thread's hit test skips it and
    /// everything in it.
    public var isHittable: Bool
    /// The node takes text when focused (an interactive, focusable text field): what the screen
    /// shows of the fields, for tools and tests (a press or a key turns the window's text events on
    /// whatever it hits, see `SDLWindow+TextEntry`).
    public var takesText: Bool

    public init(takesPointer: Bool = false, hitInsetTop: Double = 0, hitInsetLeft: Double = 0,
                hitInsetBottom: Double = 0, hitInsetRight: Double = 0, handlesWheel: Bool = false,
                frame: Rect? = nil, isHittable: Bool = true, takesText: Bool = false) {
        self.frame = frame?.sanitized
        self.takesText = takesText
        self.isHittable = isHittable
        self.takesPointer = takesPointer
        self.hitInsetTop = hitInsetTop.isFinite ? hitInsetTop : 0
        self.hitInsetLeft = hitInsetLeft.isFinite ? hitInsetLeft : 0
        self.hitInsetBottom = hitInsetBottom.isFinite ? hitInsetBottom : 0
        self.hitInsetRight = hitInsetRight.isFinite ? hitInsetRight : 0
        self.handlesWheel = handlesWheel
    }

    /// Neither the pointer nor the wheel (a layer that only draws).
    public static let none = LayerInputRole()

    /// The area that takes the pointer within `size`, in the layer's own coordinates.
    func hitArea(in size: Size) -> Rect {
        Rect(x: hitInsetLeft, y: hitInsetTop, width: size.width - hitInsetLeft - hitInsetRight,
             height: size.height - hitInsetTop - hitInsetBottom)
    }
}
