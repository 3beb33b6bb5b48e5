internal import CSDL
import FoundationEssentials
import Glibc
import Dispatch

/// Which of SDL's video drivers a process's first window starts SDL with.
///
/// SDL 2.26 tries X11 before Wayland, so on a Wayland desktop (which runs Xwayland beside it) an app
/// would run through X11, scaled by the compositor. Tessera prefers Wayland wherever
/// `WAYLAND_DISPLAY` names a compositor, with X11 as the fallback when SDL's Wayland driver does not
/// start. The user's own `SDL_VIDEODRIVER` wins, with one exception: SDL 2.26's Wayland driver
/// crashes while it starts on a compositor that offers no seat (no `wl_seat` global: weston's
/// headless backend), so such a compositor is never handed to SDL; X11 is used when `DISPLAY` is set,
/// and the window cannot open otherwise. Either way it is said once on standard error.
/// - Thread: any (a value)
public struct VideoDriverChoice: Equatable, Sendable {
    /// The driver (or SDL's comma-separated list) to start SDL's video with, set as
    /// `SDL_HINT_VIDEODRIVER` over the environment's; nil leaves SDL's own choice (the environment's
    /// `SDL_VIDEODRIVER`, or its built-in order).
    public var driver: String?
    /// Tried when `driver` fails to start: nil for SDL's own order.
    public var fallback: String?
    /// Why the choice differs from what the environment asked for, said once on standard error.
    public var notice: String?
    /// Said once on standard error when SDL's Wayland driver did start: that the window has no input.
    public var inputNotice: String?
    /// Set when no driver can open a window here without crashing: the reason, thrown as the
    /// window's error.
    public var failure: String?

    /// What a Wayland compositor says of its seats: how many (-1: none answered, -2: no
    /// libwayland-client) and whether any has a keyboard or a pointer.
    /// - Thread: any (a value)
    public struct Seats: Equatable, Sendable {
        public var count: Int
        public var hasKeyboardOrPointer: Bool
        public init(count: Int, hasKeyboardOrPointer: Bool) {
            self.count = count; self.hasKeyboardOrPointer = hasKeyboardOrPointer
        }
    }

    /// The choice for `environment`; `seats` asks the Wayland compositor the environment names of its
    /// seats, and is called only when the answer matters. On a compositor whose seats have neither a
    /// keyboard nor a pointer (a headless one) the window opens on Wayland without input, and says so.
    public static func make(environment: [String: String], seats: () -> Seats) -> VideoDriverChoice {
        let asked = environment["SDL_VIDEODRIVER"].flatMap { $0.isEmpty ? nil : $0.lowercased() }
        let waylandDisplay = environment["WAYLAND_DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        let hasX11 = !(environment["DISPLAY"] ?? "").isEmpty
        let asksWayland = asked.map { $0.split(separator: ",").first == "wayland" } ?? false
        // The user's choice of another driver (x11, dummy, …) stands untouched.
        if asked != nil && !asksWayland { return VideoDriverChoice() }
        // Nothing asked and no Wayland compositor named: SDL's own order (X11).
        if asked == nil && waylandDisplay == nil { return VideoDriverChoice() }
        let answer = seats()
        let seats = answer.count
        let name = waylandDisplay ?? "wayland-0"
        let noInput = seats > 0 && !answer.hasKeyboardOrPointer
            ? "tessera: the Wayland compositor at \(name) has a seat with no keyboard and no pointer: the window "
              + "opens without input (none is read until a device appears)" : nil
        if seats == 0 {
            let why = "the Wayland compositor at \(name) offers no seat (no keyboard, no pointer), where SDL 2.26's "
                + "Wayland driver crashes as it starts"
            if hasX11 {
                return VideoDriverChoice(driver: "x11", notice: "tessera: " + why + "; the window opens through X11 "
                                         + "(DISPLAY=\(environment["DISPLAY"] ?? "")) instead, its input from there")
            }
            return VideoDriverChoice(failure: why + ", and DISPLAY is not set for X11")
        }
        // The user asked for Wayland: theirs, as asked.
        if asksWayland { return VideoDriverChoice(inputNotice: noInput) }
        // A compositor that does not answer (or no libwayland-client): SDL's own order.
        if seats < 0 { return VideoDriverChoice() }
        return VideoDriverChoice(driver: "wayland", fallback: hasX11 ? "x11" : nil, inputNotice: noInput)
    }

    /// The choice for this process's environment, its compositor asked through libwayland-client.
    static func forProcess() -> VideoDriverChoice {
        make(environment: ProcessInfo.processInfo.environment, seats: { waylandSeats() })
    }

    /// What the compositor at `WAYLAND_DISPLAY` (or `display`: a socket's name or path) says of its
    /// seats (`wl_seat` globals and their capabilities); a count of -1 when none answers, -2 when
    /// libwayland-client cannot be loaded.
    /// - Thread: any
    public static func waylandSeats(display: String? = nil) -> Seats {
        var capabilities: UInt32 = 0
        let count = Int(tessera_wayland_seats(display, &capabilities))
        // WL_SEAT_CAPABILITY_POINTER 1, _KEYBOARD 2.
        return Seats(count: count, hasKeyboardOrPointer: capabilities & 3 != 0)
    }

    /// Starts SDL's video (and events) subsystem with this choice: the driver, then the fallback when
    /// the driver does not start. Says the notice on standard error first.
    /// - Throws: `SDLBackendError` when the choice has a failure or no driver starts.
    func startVideo() throws {
        if let notice { writeToStandardError(notice + "\n") }
        if let failure { throw SDLBackendError(message: "SDL could not start video: " + failure) }
        let subsystems = UInt32(SDL_INIT_VIDEO) | UInt32(SDL_INIT_EVENTS)
        if let driver { SDL_SetHintWithPriority(SDL_HINT_VIDEODRIVER, driver, SDL_HINT_OVERRIDE) }
        defer { if driver != nil { SDL_ResetHint(SDL_HINT_VIDEODRIVER) } }
        if SDL_InitSubSystem(subsystems) == 0 {
            sayInputNotice()
            return
        }
        let error = String(cString: SDL_GetError())
        guard let driver else { throw SDLBackendError(message: "SDL could not start video: \(error)") }
        writeToStandardError("tessera: SDL's \(driver) video driver did not start (\(error)); "
                                             + "trying \(fallback ?? "SDL's own order")\n")
        if let fallback {
            SDL_SetHintWithPriority(SDL_HINT_VIDEODRIVER, fallback, SDL_HINT_OVERRIDE)
        } else {
            SDL_ResetHint(SDL_HINT_VIDEODRIVER)
        }
        guard SDL_InitSubSystem(subsystems) == 0 else {
            throw SDLBackendError(message: "SDL could not start video: \(String(cString: SDL_GetError()))")
        }
        sayInputNotice()
    }

    /// The input notice, when the driver that started is Wayland's.
    private func sayInputNotice() {
        guard let inputNotice, SDL_GetCurrentVideoDriver().map({ String(cString: $0) }) == "wayland" else { return }
        writeToStandardError(inputNotice + "\n")
    }
}
