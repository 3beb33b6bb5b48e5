import FoundationEssentials
import Glibc
import Dispatch
import Synchronization
internal import CSDL

/// The scale a desktop asks of its applications' windows where the window system leaves scaling to
/// them: on X11 a window's drawable is as large as the window, so the density comes from what the
/// desktop says, as GTK and Qt read it —
///
/// 1. `GDK_SCALE`, a whole number from 1 to 8 (as GTK takes it; other values are ignored; 1 stops
///    here);
/// 2. else `Xft.dpi` from the X server's resource database (what `xrdb` loaded; desktops set it for
///    their scaling), over 96: 120 is 1.25, 144 is 1.5, 168 is 1.75, 192 is 2.
///
/// The scale is kept to steps of 1/8 (the fractional scales desktops offer are all on them) between
/// 1 and 8: a DPI under 96 draws at 1, nothing smaller. Layout stays in points; text and images are
/// drawn at the pixel size of the scale, fractional ones included.
///
/// A window opened with a scale of its own (`SDLWindow.Configuration.scale`; an app's
/// `TESSERA_SCALE`, the gallery's `--scale`) ignores the desktop's; on Wayland the output's scale
/// applies instead (the drawable is larger than the window there).
///
/// The desktop's scale is read once per process, as the first window opens: a later change applies
/// to windows opened after a restart.
/// - Thread: any (a value)
public struct DesktopScale: Sendable, Equatable, CustomStringConvertible {
    /// Where a desktop scale came from.
    /// - Thread: any (a value)
    public enum Source: Sendable, Equatable {
        /// `GDK_SCALE` in the environment.
        case gdkScale
        /// `Xft.dpi` in the X server's resource database, with the DPI it gave.
        case xftDPI(Double)
    }

    /// Output pixels per point.
    public let scale: Double
    public let source: Source

    /// The smallest and largest scales a desktop can ask for.
    public static let range: ClosedRange<Double> = 1...8

    /// "1.5 from Xft.dpi 144", "2 from GDK_SCALE".
    public var description: String {
        let number = Int(exactly: scale).map(String.init) ?? String(scale)
        switch source {
        case .gdkScale: return "\(number) from GDK_SCALE"
        case let .xftDPI(dpi):
            // A whole number too large for an Int (a hostile resource) is said as a Double.
            return "\(number) from Xft.dpi \(Int(exactly: dpi).map(String.init) ?? String(dpi))"
        }
    }

    /// The scale `environment` and the resource database `resources` (nil: none) ask for; nil when
    /// they ask for none (or only for 1). Unreadable values are ignored, never guessed at.
    public static func resolve(environment: [String: String], resources: String?) -> DesktopScale? {
        let result: DesktopScale?
        if let text = environment["GDK_SCALE"]?.trimmingSpaces, let whole = Int(text), (1...8).contains(whole) {
            // GDK_SCALE=1 says 1, whatever Xft.dpi says.
            result = whole == 1 ? nil : DesktopScale(scale: Double(whole), source: .gdkScale)
        } else if let dpi = resources.flatMap(xftDPI(in:)), let scale = snapped(dpi / 96) {
            result = DesktopScale(scale: scale, source: .xftDPI(dpi))
        } else {
            result = nil
        }
        return result
    }

    /// The value of `Xft.dpi` in an X resource database (lines of `name: value`; the last line that
    /// names it wins, as in Xlib), when it is a positive, finite number.
    public static func xftDPI(in resources: String) -> Double? {
        var found: Double?
        for line in resources.split(whereSeparator: \.isNewline) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            // Xlib takes `Xft.dpi` and `Xft*dpi` alike for a program whose resource class is Xft's.
            let name = line[..<colon].trimmingSpaces
            guard name == "Xft.dpi" || name == "Xft*dpi" else { continue }
            if let value = number(String(line[line.index(after: colon)...])), value > 0 { found = value }
        }
        return found
    }

    /// The desktop scale of this process's X11 display, read once (see the type's notes).
    /// - Thread: the thread that owns SDL's video (the resource database is read through libX11).
    static func currentX11() -> DesktopScale? {
        if let cached = cachedX11.withLock({ $0 }) { return cached }
        // Read outside the lock (a call into libX11); the first read stored wins.
        let raw = tessera_x11_resource_database()
        let resources = raw.map { String(cString: $0) }
        SDL_free(raw)
        let scale = resolve(environment: ProcessInfo.processInfo.environment, resources: resources)
        return cachedX11.withLock { cached in
            if cached == nil { cached = .some(scale) }
            return cached!
        }
    }

    private static let cachedX11 = Mutex<DesktopScale??>(nil)

    private static func number(_ text: String) -> Double? {
        guard let value = Double(text.trimmingSpaces), value.isFinite else { return nil }
        return value
    }

    /// `value` on the 1/8 grid within `range`; nil for 1 (nothing to do) or a value that is no scale.
    private static func snapped(_ value: Double) -> Double? {
        guard value.isFinite, value > 0 else { return nil }
        let scale = min(max((value * 8).rounded() / 8, range.lowerBound), range.upperBound)
        return scale == 1 ? nil : scale
    }
}

private extension StringProtocol {
    var trimmingSpaces: String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
