/// A scroll the compositor thread moved itself, handed back to the UI thread with the event that
/// moved it: the UI thread's scroll takes `track` over as it is (see `ScrollBinding`).
/// - Thread: any (a value)
public struct ScrollUpdate: Sendable, Hashable {
    /// The bound layer's serial (`Layer.serial` of the scroll's content layer).
    public let layer: Int
    /// The binding's `handoff` the compositor thread started from: a scroll whose own `handoff`
    /// moved on since applies the event itself instead.
    public let handoff: Int
    /// The motion after the event, at the event's time.
    public let track: ScrollTrack
}

/// The scrolls a compositor thread drives itself, and where it sends the wheel and presses.
///
/// A scroll is the compositor thread's from the event it applied until a snapshot says the UI
/// thread has taken that event in (or started a motion of its own: a new `handoff`); meanwhile the
/// thread draws its own copy of the motion, glide included, over what the snapshots say.
/// - Thread: the compositor thread (a value it keeps)
struct CompositorScrolls {
    private struct Owned {
        var track: ScrollTrack
        var binding: ScrollBinding
        /// The last event applied to it.
        var lastSequence: Int
        /// The wheel events applied and not yet taken in by the UI thread, to apply again on a new
        /// motion the UI thread starts before it takes them in.
        var pending: [(sequence: Int, time: Double, steps: Double)]
    }

    /// Where the pointer is, in window points (nil: outside the window).
    var pointer: Point?
    private var owned: [Int: Owned] = [:]
    /// Counts changes of what the owned scrolls draw (their tracks and bindings).
    private var generation = 0
    /// The last snapshot `apply` was given, what it applied and its result: the same inputs give the
    /// same object, so a compositor at rest sees nothing new to draw.
    private var applied: (input: LayerSnapshot?, generation: Int, moving: Bool, output: LayerSnapshot?)?

    /// True when the compositor thread drives a scroll now.
    var isEmpty: Bool { owned.isEmpty }

    /// The offsets the compositor thread drives, by layer serial, at `time`.
    func offsets(at time: Double) -> [Int: Double] { owned.mapValues { $0.track.offset(at: time) } }

    /// True while a scroll the compositor thread drives moves by itself at `time`.
    func isMoving(at time: Double) -> Bool { owned.values.contains { $0.track.isMoving(at: time) } }

    // MARK: Snapshots

    /// Takes in a new snapshot made after the UI thread took in the events up to `consumedInput`:
    /// each scroll goes back to the snapshot once the UI thread has taken in every event applied to
    /// it, or once the UI thread started a motion of its own (then the events it has not taken in
    /// are applied again on that motion, as the UI thread itself will).
    mutating func commit(_ snapshot: LayerSnapshot?, consumedInput: Int) {
        guard !owned.isEmpty else { return }
        var kept: [Int: Owned] = [:]
        for (serial, scroll) in owned {
            guard let snapshot, let layer = Self.boundLayer(serial: serial, in: snapshot),
                  let binding = layer.scrollBinding else { continue }
            let untaken = scroll.pending.filter { $0.sequence > consumedInput }
            if binding.handoff != scroll.binding.handoff {
                guard let first = untaken.first else { continue }
                var track = binding.ownerTrack(for: layer, at: first.time)
                // A drag holds the scroll on the UI thread, which applies no wheel to it: the scroll
                // is the UI thread's again (the events it has not taken in are its own to apply).
                if track.motion.isDragging { continue }
                // Each event as the UI thread's scroll takes it: one that moves nothing at an edge of
                // a scroll that passes the wheel outwards leaves its motion alone (a bounce goes on).
                var moves = false
                for event in untaken {
                    var next = track
                    if next.applyWheel(steps: event.steps, stepLength: binding.wheelStep, at: event.time) == 0
                        && binding.passesWheelAtEdges { continue }
                    track = next
                    moves = true
                }
                guard moves else { continue }
                kept[serial] = Owned(track: track, binding: binding, lastSequence: scroll.lastSequence, pending: untaken)
            } else if consumedInput < scroll.lastSequence {
                var updated = scroll
                updated.binding = binding
                updated.track.lower = binding.lower
                updated.track.upper = binding.upper
                updated.pending = untaken
                kept[serial] = updated
            }
        }
        let drawsTheSame = kept.count == owned.count && kept.allSatisfy { serial, scroll in
            owned[serial].map { $0.binding == scroll.binding && $0.track == scroll.track } ?? false
        }
        owned = kept
        if !drawsTheSame { generation &+= 1 }
    }

    /// `snapshot` with the scrolls the thread drives placed where their motions put them at `time`
    /// (moving on by themselves, as animations, while they move).
    mutating func apply(to snapshot: LayerSnapshot?, at time: Double) -> LayerSnapshot? {
        guard let snapshot, !owned.isEmpty else { return snapshot }
        let moving = isMoving(at: time)
        if let applied, applied.input === snapshot, applied.generation == generation, applied.moving == moving {
            return applied.output
        }
        let output = replacing(snapshot, at: time)
        applied = (snapshot, generation, moving, output)
        return output
    }

    private func replacing(_ layer: LayerSnapshot, at time: Double) -> LayerSnapshot {
        guard layer.hasScrollBinding else { return layer }
        // Scrolls inside a driven scroll may be driven too.
        let sublayers = layer.sublayers.map { replacing($0, at: time) }
        let inner = zip(sublayers, layer.sublayers).allSatisfy({ $0 === $1 }) ? layer : layer.with(sublayers: sublayers)
        if let scroll = owned[layer.id], layer.scrollBinding != nil {
            let binding = scroll.binding
            return inner.moving(along: scroll.track, origin: binding.origin, from: max(time, scroll.track.time),
                                horizontally: binding.isHorizontal)
        }
        return inner
    }

    // MARK: Input

    /// Moves the bound scroll the UI thread would send this wheel event to, when the compositor
    /// thread can: returns what it did, for the UI thread to take over; nil leaves the event to the
    /// UI thread alone. `shown` is the tree as drawn (scrolls the thread drives in place).
    mutating func wheel(dx: Double, dy: Double, sequence: Int, at time: Double, shown: LayerSnapshot?) -> ScrollUpdate? {
        guard let pointer, let shown, let path = Self.hitPath(to: pointer, in: shown, at: time) else { return nil }
        var tried = Set<Int>()
        for index in path.indices.reversed() {
            let layer = path[index]
            let bound = Self.boundScroll(at: layer, containing: pointer)
            if let (content, binding) = bound, tried.insert(content.id).inserted {
                // The UI thread's scroll would take the event, and its motion is known here.
                if binding.otherAxisOnUIThread && (binding.isHorizontal ? dy != 0 : dx != 0) { return nil }
                guard let steps = ScrollTrack.wheelSteps(dx: dx, dy: dy, horizontal: binding.isHorizontal) else { continue }
                var track = owned[content.id]?.track ?? binding.ownerTrack(for: content, at: time)
                // A drag holds the scroll on the UI thread, which the wheel does not move.
                if track.motion.isDragging { return nil }
                let moved = track.applyWheel(steps: steps, stepLength: binding.wheelStep, at: time)
                if moved == 0 && binding.passesWheelAtEdges { continue }
                var pending = owned[content.id]?.pending ?? []
                pending.append((sequence, time, steps))
                owned[content.id] = Owned(track: track, binding: binding, lastSequence: sequence, pending: pending)
                generation &+= 1
                return ScrollUpdate(layer: content.id, handoff: binding.handoff, track: track)
            }
            if bound == nil && layer.inputRole.handlesWheel { return nil }
        }
        return nil
    }

    /// Stops, where the screen shows it at `time`, the moving bound scroll the UI thread would stop
    /// for a press at the pointer (the innermost one moving, when no scroll only the UI thread knows
    /// comes first). Returns true when one was stopped.
    mutating func press(sequence: Int, at time: Double, shown: LayerSnapshot?) -> Bool {
        guard let pointer, let shown, let path = Self.hitPath(to: pointer, in: shown, at: time) else { return false }
        var tried = Set<Int>()
        for index in path.indices.reversed() {
            let layer = path[index]
            let bound = Self.boundScroll(at: layer, containing: pointer)
            if let (content, binding) = bound, tried.insert(content.id).inserted {
                var track = owned[content.id]?.track ?? binding.ownerTrack(for: content, at: time)
                if track.stop(at: time) {
                    owned[content.id] = Owned(track: track, binding: binding, lastSequence: sequence,
                                              pending: owned[content.id]?.pending ?? [])
                    generation &+= 1
                    return true
                }
                continue
            }
            // A scroll only the UI thread moves, moving by itself now, is the one the press stops;
            // one at rest lets the press through to the scrolls outside it.
            if bound == nil && layer.inputRole.handlesWheel && layer.isAnimating(at: time) { return false }
        }
        return false
    }

    // MARK: Hit testing

    /// The layers from `root` to the frontmost one under `point` that takes the pointer, as drawn at
    /// `time`; nil when nothing there takes it.
    static func hitPath(to point: Point, in root: LayerSnapshot, at time: Double?) -> [LayerSnapshot]? {
        var path: [LayerSnapshot] = []
        return search(root, point: point, parentOrigin: .zero, time: time, path: &path) ? path : nil
    }

    private static func search(_ layer: LayerSnapshot, point: Point, parentOrigin: Point, time: Double?,
                               path: inout [LayerSnapshot]) -> Bool {
        // A node's layer where the node is; another layer where it is drawn.
        let role = layer.inputRole
        if role.frame != nil {
            guard role.isHittable else { return false }
        } else {
            guard !layer.isHidden, layer.presentedOpacity(at: time) > 0 else { return false }
        }
        let frame = role.frame ?? layer.presentedFrame(at: time)
        let origin = Point(x: parentOrigin.x + frame.minX, y: parentOrigin.y + frame.minY)
        let local = Point(x: point.x - origin.x, y: point.y - origin.y)
        // What a clipping layer does not show cannot be touched.
        if layer.clipsToBounds && !Rect(origin: .zero, size: frame.size).contains(local) { return false }
        path.append(layer)
        for sublayer in layer.sublayers.reversed() {
            if search(sublayer, point: point, parentOrigin: origin, time: time, path: &path) { return true }
        }
        if layer.inputRole.takesPointer && layer.inputRole.hitArea(in: frame.size).contains(local) { return true }
        // A bound scroll takes the pointer over its viewport (a list or scroll node is interactive).
        if layer.hasScrollBinding && boundScroll(at: layer, containing: point) != nil { return true }
        path.removeLast()
        return false
    }

    /// The bound scroll `layer` stands for: itself (a content layer), or its bound sublayer whose
    /// viewport holds `point` (the scroll node's own layer, around its content).
    private static func boundScroll(at layer: LayerSnapshot, containing point: Point) -> (LayerSnapshot, ScrollBinding)? {
        if let binding = layer.scrollBinding { return binding.viewport.contains(point) ? (layer, binding) : nil }
        guard layer.hasScrollBinding else { return nil }
        for sublayer in layer.sublayers.reversed() {
            if let binding = sublayer.scrollBinding, binding.viewport.contains(point) { return (sublayer, binding) }
        }
        return nil
    }

    /// The layer `serial` with a binding, searching only subtrees that hold bindings.
    static func boundLayer(serial: Int, in layer: LayerSnapshot) -> LayerSnapshot? {
        guard layer.hasScrollBinding else { return nil }
        if layer.id == serial { return layer }
        for sublayer in layer.sublayers {
            if let found = boundLayer(serial: serial, in: sublayer) { return found }
        }
        return nil
    }
}
