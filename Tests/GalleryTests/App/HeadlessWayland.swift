import Foundation
import Glibc
import TestSupport
import XCTest

/// A headless Wayland compositor from Debian's packages, for window tests: sway on wlroots' headless
/// backend (one output, HEADLESS-1, and a seat with no devices), weston's headless backend (no
/// seat at all), or weston's X11 backend inside an X server (Xvfb): its output is an X window there,
/// its seat the X server's keyboard and pointer, and it draws no decorations for its clients (SDL
/// draws them with libdecor). Each runs with an XDG_RUNTIME_DIR of its own (a temporary folder, mode 0700) that
/// holds its socket, and is ended by `stop()`. sway refuses to run as root: as root it (and weston on
/// X11) runs as `nobody` (setpriv), its runtime folder given to that user; the tests, as root, reach it anyway.
final class HeadlessWayland {
    enum Kind: Equatable {
        case sway, weston
        /// weston's X11 backend on the X display named (":N"), with the pixman renderer.
        case westonOnX11(display: String)

        /// The compositor's program.
        var binary: String {
            switch self {
            case .sway: "sway"
            case .weston, .westonOnX11: "weston"
            }
        }
    }

    let kind: Kind
    /// The compositor's runtime folder (XDG_RUNTIME_DIR).
    let runtimeDirectory: URL
    /// Its socket's name (WAYLAND_DISPLAY).
    private(set) var socket = ""
    private let process = Process()
    private let log: URL

    /// What a client of this compositor runs with.
    var environment: [String: String] {
        ["XDG_RUNTIME_DIR": runtimeDirectory.path, "WAYLAND_DISPLAY": socket]
    }

    /// Starts `kind` and waits (at most 20 s) until it listens on its socket (and, for sway, answers
    /// on its IPC socket).
    /// - Throws: `XCTSkip` when the compositor is not installed; an error when it does not start.
    init(_ kind: Kind) throws {
        self.kind = kind
        guard let binary = Xvfb.which(kind.binary) else {
            throw XCTSkip("\(kind.binary) is not installed (make test installs it)")
        }
        let template = FileManager.default.temporaryDirectory.appendingPathComponent("tessera-wayland-XXXXXX").path
        var bytes = Array(template.utf8CString)
        guard let made = mkdtemp(&bytes) else { throw GalleryWindowError(what: "no runtime folder: errno \(errno)") }
        runtimeDirectory = URL(fileURLWithPath: String(cString: made))
        chmod(runtimeDirectory.path, 0o700)
        log = runtimeDirectory.appendingPathComponent("compositor.log")
        var environment = ["PATH": "/usr/bin:/bin", "HOME": runtimeDirectory.path,
                           "XDG_RUNTIME_DIR": runtimeDirectory.path]
        var arguments: [String]
        switch kind {
        case .sway:
            // The gallery's window floats at the size it asks for, with no border: its content is its rect.
            let config = runtimeDirectory.appendingPathComponent("sway.config")
            try """
            output HEADLESS-1 resolution 1280x800 scale 1
            default_border none
            default_floating_border none
            for_window [title=".*"] floating enable
            """.write(to: config, atomically: true, encoding: .utf8)
            environment["WLR_BACKENDS"] = "headless"
            environment["WLR_LIBINPUT_NO_DEVICES"] = "1"
            environment["WLR_RENDERER"] = "pixman"
            arguments = [binary, "-c", config.path]
        case .weston:
            arguments = [binary, "--backend=headless-backend.so", "--socket=wayland-tessera", "--width=1280",
                         "--height=800", "--idle-time=0"]
        case .westonOnX11(let display):
            // One output of 1280×800 (an X window at the X screen's top left), drawn without OpenGL.
            environment["DISPLAY"] = display
            arguments = [binary, "--backend=x11-backend.so", "--socket=wayland-tessera", "--width=1280",
                         "--height=800", "--use-pixman", "--idle-time=0"]
        }
        if kind != .weston && getuid() == 0 {
            // sway refuses to run as root; weston on X11 would run, and runs as sway does, as an
            // unprivileged user as in a desktop session: nobody owns its runtime folder (the test, as
            // root, still reads it) and reaches the X server through its socket.
            guard let setpriv = Xvfb.which("setpriv") else {
                throw XCTSkip("setpriv (util-linux) is needed to run \(kind.binary) as root")
            }
            chown(runtimeDirectory.path, 65534, 65534)
            chmod(runtimeDirectory.path, 0o700)
            if kind == .sway { chown(runtimeDirectory.appendingPathComponent("sway.config").path, 65534, 65534) }
            arguments = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"] + arguments
        }
        FileManager.default.createFile(atPath: log.path, contents: nil)
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.environment = environment
        let output = try FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Ready once its socket is there (and sway's IPC answers).
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: runtimeDirectory.path)) ?? []
            if let name = names.first(where: { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }) {
                socket = name
                if kind != .sway || (try? message(["-t", "get_outputs"]))?.contains("HEADLESS-1") == true { return }
            }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        let said = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        stop()
        throw GalleryWindowError(what: "\(kind.binary) did not start: \(said)")
    }

    /// Runs swaymsg with `arguments` on this sway's IPC socket; its output.
    /// - Throws: when swaymsg fails.
    @discardableResult
    func message(_ arguments: [String]) throws -> String {
        let names = try FileManager.default.contentsOfDirectory(atPath: runtimeDirectory.path)
        guard let ipc = names.first(where: { $0.hasPrefix("sway-ipc.") }),
              let swaymsg = Xvfb.which("swaymsg") else { throw GalleryWindowError(what: "no sway IPC socket") }
        let (status, output) = try GalleryProcess.run(swaymsg, ["-s", runtimeDirectory.appendingPathComponent(ipc).path]
                                                      + arguments, environment: [:])
        guard status == 0 else { throw GalleryWindowError(what: "swaymsg \(arguments): \(output)") }
        return output
    }

    /// Sets HEADLESS-1's scale (sway), its size kept at 1280×800 layout points.
    func setScale(_ scale: Int) throws {
        try message(["output", "HEADLESS-1", "resolution", "\(1280 * scale)x\(800 * scale)", "scale", "\(scale)"])
    }

    /// The layout rectangle (x, y, width, height) of the window titled `title` in sway's tree, nil
    /// while there is none.
    func windowRect(title: String) throws -> (x: Int, y: Int, width: Int, height: Int)? {
        let tree = try JSONSerialization.jsonObject(with: Data(message(["-t", "get_tree", "-r"]).utf8))
        func find(_ node: Any) -> [String: Any]? {
            guard let node = node as? [String: Any] else { return nil }
            if node["name"] as? String == title, node["pid"] != nil { return node }
            for key in ["nodes", "floating_nodes"] {
                for child in node[key] as? [Any] ?? [] { if let found = find(child) { return found } }
            }
            return nil
        }
        guard let rect = find(tree)?["rect"] as? [String: Any],
              let x = rect["x"] as? Int, let y = rect["y"] as? Int,
              let width = rect["width"] as? Int, let height = rect["height"] as? Int, width > 0 else { return nil }
        return (x, y, width, height)
    }

    /// What the compositor wrote.
    var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// Ends the compositor and removes its runtime folder.
    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: runtimeDirectory)
    }

    deinit { stop() }
}
