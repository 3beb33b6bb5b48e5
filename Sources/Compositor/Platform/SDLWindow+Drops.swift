internal import CSDL

// Drags and drops from other applications. SDL 2 reports a drop (`SDL_DROPBEGIN`, a `SDL_DROPFILE`
// or `SDL_DROPTEXT` per item, `SDL_DROPCOMPLETE`) but not the drag before it; on X11 it answers the
// drag's XDND messages itself, and Tessera reads them too, through SDL's window-system events, to
// say where the drag is (`InputEvent.dragMoved`, `.dragExited`) so that drop targets can show it.

extension SDLWindow {
    /// Translates a drop event, or a drag message for this window (the type `SDLDrags.eventType`),
    /// keeping what a drop collects until it completes. Nil for an event that says nothing yet.
    func translateDrop(_ event: SDL_Event) -> InputEvent? {
        let type = event.type
        if type == SDLDrags.eventType {
            switch event.user.code {
            case 1, 2:
                // Screen coordinates (the window system's units) to window points.
                let state = windowPlacement.state
                let units = max(state.unitsPerPoint, 0.001)
                let root = SDLDrags.unpack(event.user.data1)
                let point = Point(x: (Double(root.x) - state.origin.x) / units, y: (Double(root.y) - state.origin.y) / units)
                dragPoint = point
                return .dragMoved(point)
            case 3:
                dragPoint = nil
                return .dragExited
            default:
                // The drop itself: the drag over the window ends here. SDL's drop events follow, once
                // it has read what was dropped, at the drag's last place (kept); or none at all, when
                // SDL took none of the drag's types or the source gave nothing.
                return .dragExited
            }
        }
        switch SDL_EventType(type) {
        case SDL_DROPBEGIN:
            droppedItems = []
            return nil
        case SDL_DROPFILE, SDL_DROPTEXT:
            // Items without a begin (a platform that sends none, a test's push) collect all the same.
            if droppedItems == nil { droppedItems = [] }
            guard let pointer = event.drop.file, pointer.pointee != 0 else { return nil }  // nothing dropped
            let item: DroppedItem
            if SDL_EventType(type) == SDL_DROPFILE {
                // A name that is not UTF-8 would name another file once decoded: left out.
                guard let path = String(validatingCString: pointer) else { return nil }
                item = .file(path)
            } else {
                item = .text(String(decoding: UnsafeBufferPointer(start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self),
                                                                  count: strlen(pointer)), as: UTF8.self))
            }
            // In place: a drop of many thousands of files is gathered in linear time.
            droppedItems!.append(item)
            // A drop with no completion to follow (SDL before 2.0.5) would wait forever: none here.
            return nil
        case SDL_DROPCOMPLETE:
            let items = droppedItems ?? []
            droppedItems = nil
            // Where the drag last was; else where the pointer is (the platform said nothing of the drag).
            let point = dragPoint ?? pointerPositionInWindow()
            dragPoint = nil
            return items.isEmpty ? .dragExited : .dropped(items, at: point)
        default:
            return nil
        }
    }

    /// The pointer's place in window points, read from the window system now; nil when it cannot say.
    private func pointerPositionInWindow() -> Point? {
        var x: Int32 = 0, y: Int32 = 0
        _ = SDL_GetGlobalMouseState(&x, &y)
        let state = windowPlacement.state
        guard state.unitsPerPoint > 0 else { return nil }
        let point = Point(x: (Double(x) - state.origin.x) / state.unitsPerPoint, y: (Double(y) - state.origin.y) / state.unitsPerPoint)
        return videoDriverName == "dummy" ? nil : point
    }

    /// Puts a drag's place on SDL's queue as the window system would: `kind` 1 entered, 2 moved, 3
    /// left, at `screenPoint` (the window system's units). Tests of drop targets use it.
    package func pushDrag(kind: Int32, screenPoint: Point = .zero) {
        var event = SDL_Event()
        event.type = SDLDrags.eventType
        event.user.code = kind
        event.user.windowID = windowID.rawValue
        // As the window system's 16-bit coordinates are: within Int32 (no trap for any value given).
        func coordinate(_ value: Double) -> Int {
            value.isNaN ? 0 : Int(min(max(value.rounded(), Double(Int32.min)), Double(Int32.max)))
        }
        event.user.data1 = SDLDrags.pack(x: coordinate(screenPoint.x), y: coordinate(screenPoint.y))
        SDL_PushEvent(&event)
    }

    /// Puts a whole drop on SDL's queue (begin, the items, complete) as SDL sends one.
    package func pushDrop(_ items: [DroppedItem]) {
        func push(_ type: SDL_EventType, _ text: String?) {
            var event = SDL_Event()
            event.type = type.rawValue
            event.drop.file = text.map { SDL_strdup($0) } ?? nil
            event.drop.windowID = windowID.rawValue
            SDL_PushEvent(&event)
        }
        push(SDL_DROPBEGIN, nil)
        for item in items {
            switch item {
            case let .file(path): push(SDL_DROPFILE, path)
            case let .text(text): push(SDL_DROPTEXT, text)
            }
        }
        push(SDL_DROPCOMPLETE, nil)
    }

    /// Notes the window's X11 id for the drags the window system sends to it (0: none).
    func registerForDrags(x11Window: UInt) {
        var atoms = [UInt](repeating: 0, count: 4)
        if x11Window != 0 && !SDLDrags.knowsMessageTypes { _ = tessera_sdl_xdnd_atoms(window, &atoms) }
        SDLDrags.register(x11Window: x11Window, window: windowID.rawValue, atoms: atoms)
    }
}

/// XDND messages turned into events of Tessera's own type for the window they are for: SDL's
/// window-system events are turned on, and an event filter keeps only the drags among them (every
/// other window-system event is dropped as SDL reads it, before it takes a place in the queue).
/// - Thread: any
enum SDLDrags {
    /// The event type drags are reported with (`SDL_RegisterEvents`).
    static let eventType: UInt32 = {
        let type = SDL_RegisterEvents(1)
        return type == UInt32.max ? UInt32(SDL_LASTEVENT.rawValue) : type
    }()

    /// X11 window ids to SDL's window ids.
    private static let windows = Guarded<[UInt: UInt32]>([:])
    /// The XDND message types (XdndEnter, XdndPosition, XdndLeave, XdndDrop) on the X display, looked up
    /// once as windows register: the filter reads messages without a call into Xlib.
    private static let atoms = Guarded<[UInt]>([0, 0, 0, 0])
    /// True once a window found the XDND message types.
    static var knowsMessageTypes: Bool { atoms.withLock { $0.contains { $0 != 0 } } }

    private static let filter: Void = {
        _ = eventType
        // SDL 2 discards every queued event as a filter is set (the window's first events, another
        // thread's wake, a drop with its allocated names): taken out first and put back after, as
        // they were (an event pushed by another thread in between may come before them).
        var queued: [SDL_Event] = []
        var chunk = [SDL_Event](repeating: SDL_Event(), count: 256)
        while true {
            let count = SDL_PeepEvents(&chunk, Int32(chunk.count), SDL_GETEVENT, SDL_FIRSTEVENT.rawValue, SDL_LASTEVENT.rawValue)
            guard count > 0 else { break }
            queued += chunk.prefix(Int(count))
        }
        defer {
            if !queued.isEmpty {
                let added = SDL_PeepEvents(&queued, Int32(queued.count), SDL_ADDEVENT, SDL_FIRSTEVENT.rawValue, SDL_LASTEVENT.rawValue)
                // What SDL's full queue could not take back (its 65535 events): its allocations freed.
                queued.dropFirst(Int(max(0, added))).forEach(SDLEventRouting.release)
            }
        }
        SDL_SetEventFilter({ _, event in
            guard let event, event.pointee.type == SDL_SYSWMEVENT.rawValue else { return 1 }
            var message = tessera_xdnd_message()
            let atoms = SDLDrags.atoms.withLock { $0 }
            guard tessera_sdl_xdnd_message(event, atoms, &message) != 0,
                  let id = SDLDrags.windows.withLock({ $0[UInt(message.window)] }) else { return 0 }
            var drag = SDL_Event()
            drag.type = SDLDrags.eventType
            drag.user.code = message.kind
            drag.user.windowID = id
            drag.user.data1 = SDLDrags.pack(x: Int(message.root_x), y: Int(message.root_y))
            SDL_PushEvent(&drag)
            return 0
        }, nil)
        _ = SDL_EventState(UInt32(SDL_SYSWMEVENT.rawValue), SDL_ENABLE)
    }()

    static func register(x11Window: UInt, window: UInt32, atoms found: [UInt] = []) {
        // One X display per process: the first window that finds the types keeps them.
        if found.count == 4 && found.contains(where: { $0 != 0 }) {
            atoms.withLock { if !$0.contains(where: { $0 != 0 }) { $0 = found } }
        }
        windows.withLock { windows in
            for (key, value) in windows where value == window { windows[key] = nil }
            if x11Window != 0 { windows[x11Window] = window }
        }
        if x11Window != 0 { _ = filter }
    }

    static func unregister(window: UInt32) {
        windows.withLock { windows in
            for (key, value) in windows where value == window { windows[key] = nil }
        }
    }

    /// Two screen coordinates in a user event's pointer field.
    static func pack(x: Int, y: Int) -> UnsafeMutableRawPointer? {
        UnsafeMutableRawPointer(bitPattern: UInt(UInt32(truncatingIfNeeded: x)) << 32 | UInt(UInt32(truncatingIfNeeded: y)))
    }

    static func unpack(_ pointer: UnsafeMutableRawPointer?) -> (x: Int, y: Int) {
        let bits = UInt(bitPattern: pointer)
        return (Int(Int32(truncatingIfNeeded: bits >> 32)), Int(Int32(truncatingIfNeeded: bits & 0xFFFF_FFFF)))
    }
}

extension SDLWindow {
    /// Puts one part of a drop on SDL's queue as SDL sends it: 0 its begin, 1 a file's name, 2 a
    /// text, 3 its completion; `bytes` the name or text as the platform gave them (not necessarily
    /// UTF-8). Tests of drops read in pieces use it.
    func pushDropPart(_ part: Int, bytes: [UInt8]? = nil) {
        var event = SDL_Event()
        event.type = [SDL_DROPBEGIN, SDL_DROPFILE, SDL_DROPTEXT, SDL_DROPCOMPLETE][part].rawValue
        if let bytes {
            let copy = SDL_malloc(bytes.count + 1)!.assumingMemoryBound(to: UInt8.self)
            copy.initialize(from: bytes, count: bytes.count)
            copy[bytes.count] = 0
            event.drop.file = UnsafeMutableRawPointer(copy).assumingMemoryBound(to: CChar.self)
        }
        event.drop.windowID = windowID.rawValue
        SDL_PushEvent(&event)
    }
}
