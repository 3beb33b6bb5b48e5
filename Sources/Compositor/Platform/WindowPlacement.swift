import FoundationEssentials
import Glibc
import Dispatch

/// Where the window is on the screen and whether it has the keyboard focus, kept up to date by the
/// thread that owns the window (it reads SDL's window events) and read from any thread: a screen
/// reader's bridge asks for screen coordinates on its own thread, where SDL may not be called.
/// - Thread: any
public final class WindowPlacement: @unchecked Sendable {
    /// One reading of the window's place.
    /// - Thread: any (a value)
    public struct State: Sendable, Equatable {
        /// The top-left corner of the window's content on the screen, in the window system's units
        /// (screen pixels on X11).
        public var origin: Point
        /// Window-system units per point (the forced scale on X11, where SDL's window units are pixels).
        public var unitsPerPoint: Double
        /// The window has the keyboard focus.
        public var isActive: Bool
        /// The usable part of the window's display (less panels and docks), in the window system's
        /// units; nil where the platform does not say (the dummy driver may).
        public var usableScreenBounds: Rect?

        /// A reading. - Thread: any
        public init(origin: Point = .zero, unitsPerPoint: Double = 1, isActive: Bool = false,
                    usableScreenBounds: Rect? = nil) {
            self.origin = origin
            self.unitsPerPoint = unitsPerPoint
            self.isActive = isActive
            self.usableScreenBounds = usableScreenBounds
        }

        /// `usableScreenBounds` in the window's points, relative to its top-left corner: where its
        /// popups may go. Nil without a reading.
        public var usableScreenBoundsInPoints: Rect? {
            guard let screen = usableScreenBounds, unitsPerPoint.isFinite, unitsPerPoint > 0 else { return nil }
            return Rect(x: (screen.minX - origin.x) / unitsPerPoint, y: (screen.minY - origin.y) / unitsPerPoint,
                        width: screen.width / unitsPerPoint, height: screen.height / unitsPerPoint)
        }
    }

    private let lock = PlatformLock()
    private var current: State  // guarded by lock
    private var observer: (@Sendable (State) -> Void)?  // guarded by lock
    private var identifier: String?  // guarded by lock

    /// The window as the desktop's portals name a parent window: `x11:<hex id>` for an X11 window,
    /// nil for another window system (or none: headless). Set once by the window's owner as it
    /// opens; read from any thread. - Thread: any
    public var windowSystemIdentifier: String? {
        get {
            lock.lock()
            defer { lock.unlock() }
            return identifier
        }
        set {
            lock.lock()
            identifier = newValue
            lock.unlock()
        }
    }

    /// A placement that reads `state` until the window's owner updates it. - Thread: any
    public init(_ state: State = State()) { current = state }

    /// The latest reading.
    public var state: State {
        lock.lock()
        defer { lock.unlock() }
        return current
    }

    /// Records a new reading; the observer hears of it (outside the lock) when it differs.
    public func update(_ state: State) {
        lock.lock()
        let changed = state != current
        current = state
        let observer = self.observer
        lock.unlock()
        if changed { observer?(state) }
    }

    /// Called with each changed reading, on the thread that owns the window (keep it short: it
    /// runs while that thread reads events). Nil stops it.
    public func setObserver(_ observer: (@Sendable (State) -> Void)?) {
        lock.lock()
        let replaced = self.observer
        self.observer = observer
        lock.unlock()
        // The observer let go (and what it holds) is released outside the lock.
        withExtendedLifetime(replaced) {}
    }
}
