internal import CDBus
import FoundationEssentials
import Glibc
import Dispatch
import Logging
import NodeRuntime
import TesseraDBus

/// The reader's thread: connects, reads, then follows `SettingChanged` until stopped or disconnected.
/// Owns the connection; nothing here is touched by another thread (they reach it through
/// `SettingsPortalShared`).
/// - Thread: the reader's thread (not `Sendable`).
final class SettingsPortalLoop {
    static let portalName = "org.freedesktop.portal.Desktop"
    static let portalPath = "/org/freedesktop/portal/desktop"
    static let settingsInterface = "org.freedesktop.portal.Settings"
    static let memoryMonitorInterface = "org.freedesktop.portal.MemoryMonitor"

    private let seed: SettingsPortalLoopSeed
    private var shared: SettingsPortalShared { seed.shared }
    private var settings = PortalSettings()
    /// The unique name that answered for the portal (`ReadAll` or `Read`), once one has.
    private var portalOwner: String?
    /// Keys whose unusable values were reported already (each once per process).
    private static let reportedKeys = Locked(Set<String>())
    /// "No bus" and "no portal" are said once per process.
    private static let reportedUnavailable = Locked(false)

    init(seed: SettingsPortalLoopSeed) { self.seed = seed }

    func run() {
        defer { shared.firstReading.signalOnce() }
        let environment = seed.configuration.environment
        let timeout = seed.configuration.callTimeout
        guard let address = DBusConnection.sessionBusAddress(environment) else {
            unavailable("no session bus (DBUS_SESSION_BUS_ADDRESS is unset and there is no $XDG_RUNTIME_DIR/bus)")
            return
        }
        let connection: DBusConnection
        do {
            connection = try DBusConnection(address: address, timeout: timeout)
            // Subscribed before reading, so a change made meanwhile is not missed. The bus delivers
            // only the portal's own signals (`sender` is its well-known name).
            try connection.addMatch("type='signal',sender='\(Self.portalName)',interface='\(Self.settingsInterface)',"
                                    + "member='SettingChanged',path='\(Self.portalPath)'", timeout: timeout)
            if shared.lowMemory != nil {
                try connection.addMatch("type='signal',sender='\(Self.portalName)',interface='\(Self.memoryMonitorInterface)',"
                                        + "member='LowMemoryWarning',path='\(Self.portalPath)'", timeout: timeout)
            }
        } catch {
            unavailable("\((error as? DBusFailure)?.description ?? "\(error)")")
            return
        }
        if shared.state.withLock({ $0.stopRequested }) { return shared.setStatus(.stopped) }
        readAll(connection, timeout: timeout)
        shared.firstReading.signalOnce()
        serve(connection)
    }

    private func unavailable(_ reason: String) {
        shared.setStatus(.unavailable(reason))
        say("the desktop's appearance cannot be read (settings portal): \(reason); the environment's is used")
    }

    private func say(_ line: String) {
        let first = Self.reportedUnavailable.withLock { reported -> Bool in
            defer { reported = true }
            return !reported
        }
        if first { TesseraLog.appearance.info("\(line)") } else { TesseraLog.appearance.debug("\(line)") }
    }

    // MARK: Reading

    /// Reads every setting the appearance uses: `ReadAll` for the namespaces, else `Read` key by key.
    private func readAll(_ connection: DBusConnection, timeout: Double) {
        guard let call = DBusMessage.methodCall(destination: Self.portalName, path: Self.portalPath,
                                                interface: Self.settingsInterface, member: "ReadAll"),
              call.append([.array(elementSignature: "s", PortalSettings.namespaces.map { .string($0) })]) else { return }
        let reply: DBusMessage
        do {
            reply = try connection.call(call, timeout: timeout)
        } catch {
            let reason = (error as? DBusFailure)?.description ?? "\(error)"
            if reason.contains("UnknownMethod"), readKeyByKey(connection, timeout: timeout) { return }
            shared.setStatus(.noPortal(reason))
            say("the session bus has no settings portal (\(reason)); the environment's appearance is used")
            return
        }
        portalOwner = reply.sender ?? portalOwner
        var read = PortalSettings()
        let (taken, rejected) = reply.arguments()?.first.map { read.takeAll($0) } ?? (false, [])
        guard taken else {
            shared.setStatus(.noPortal("ReadAll answered \(reply.signature), not a{sa{sv}}"))
            say("the settings portal answered ReadAll with \(reply.signature), not a{sa{sv}}; the environment's appearance is used")
            return
        }
        report(rejected)
        settings = read
        shared.setStatus(.following)
        deliver()
    }

    /// `Read` (the portal's first version) for each key; true when the portal answered at least one,
    /// or the reader was stopped meanwhile.
    private func readKeyByKey(_ connection: DBusConnection, timeout: Double) -> Bool {
        let keys: [(String, String)] = [
            ("org.freedesktop.appearance", "color-scheme"), ("org.freedesktop.appearance", "accent-color"),
            ("org.freedesktop.appearance", "contrast"), ("org.freedesktop.appearance", "reduced-motion"),
            ("org.gnome.desktop.interface", "color-scheme"), ("org.gnome.desktop.interface", "gtk-theme"),
            ("org.gnome.desktop.interface", "text-scaling-factor"), ("org.gnome.desktop.interface", "enable-animations"),
            ("org.gnome.desktop.a11y.interface", "high-contrast"),
        ]
        var read = PortalSettings()
        var answered = false
        var rejected: [String] = []
        for (namespace, key) in keys {
            // Each key may take the whole time-out: stop() is heard between them (and nothing is said).
            if shared.state.withLock({ $0.stopRequested }) { return true }
            guard let call = DBusMessage.methodCall(destination: Self.portalName, path: Self.portalPath,
                                                    interface: Self.settingsInterface, member: "Read"),
                  call.append([.string(namespace), .string(key)]),
                  let reply = try? connection.call(call, timeout: timeout),
                  let value = reply.arguments()?.first else { continue }
            portalOwner = reply.sender ?? portalOwner
            answered = true
            if !read.take(namespace: namespace, key: key, value: value) { rejected.append("\(namespace) \(key)") }
        }
        guard answered else { return false }
        report(rejected)
        settings = read
        shared.setStatus(.following)
        deliver()
        return true
    }

    private func report(_ rejected: [String]) {
        for key in rejected {
            let first = Self.reportedKeys.withLock { $0.insert(key).inserted }
            if first {
                TesseraLog.appearance.warning("the settings portal's \(key) has a type or value the documentation does not allow; ignored")
            }
        }
    }

    private func deliver() {
        shared.deliver(settings, settings.appearance(environment: seed.configuration.environment))
    }

    // MARK: Following

    private func serve(_ connection: DBusConnection) {
        guard let socket = connection.fileDescriptor else {
            shared.setStatus(.unavailable("the bus connection has no socket"))
            return
        }
        var lost: String?
        while lost == nil {
            if shared.state.withLock({ $0.stopRequested }) { break }
            connection.readAndWrite()
            var changed = false
            while let message = connection.popMessage() {
                if message.kind == .signal, message.interface == "org.freedesktop.DBus.Local", message.member == "Disconnected" {
                    lost = "the session bus closed the connection"
                    break
                }
                if take(message) { changed = true }
            }
            if changed { deliver() }
            if !connection.isConnected { lost = lost ?? "the session bus connection was lost" }
            if lost != nil { break }
            if connection.hasBufferedInput { continue }
            var descriptors = [
                pollfd(fd: socket, events: Int16(POLLIN) | (connection.hasOutgoingData ? Int16(POLLOUT) : 0), revents: 0),
                pollfd(fd: shared.wakeDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            // No time-out: the thread sleeps until the bus or `stop()` wakes it.
            let result = poll(&descriptors, 2, -1)
            if result > 0, descriptors[1].revents != 0 { shared.drainWake() }
        }
        if let lost {
            shared.setStatus(.unavailable(lost))
            TesseraLog.appearance.warning("settings portal: \(lost); the appearance no longer follows the desktop")
        } else {
            shared.setStatus(.stopped)
        }
    }

    /// Takes a `SettingChanged(s namespace, s key, v value)` signal; true when it changed a setting.
    /// A `LowMemoryWarning(y level)` goes to the memory warning hand-off.
    private func take(_ message: DBusMessage) -> Bool {
        guard message.kind == .signal, isFromPortal(message) else { return false }
        if message.kind == .signal, message.interface == Self.memoryMonitorInterface, message.member == "LowMemoryWarning" {
            if let arguments = message.arguments(), arguments.count == 1, case let .byte(level) = arguments[0] {
                shared.deliverMemoryWarning(MemoryWarningLevel(portalLevel: level))
            } else {
                report(["LowMemoryWarning(\(message.signature))"])
            }
            return false
        }
        guard message.kind == .signal, message.interface == Self.settingsInterface, message.member == "SettingChanged"
        else { return false }
        shared.state.withLock { $0.changesReceived += 1 }
        guard let arguments = message.arguments(), arguments.count == 3,
              let namespace = arguments[0].stringValue, let key = arguments[1].stringValue else {
            report(["SettingChanged(\(message.signature))"])
            return false
        }
        let before = settings
        if !settings.take(namespace: namespace, key: key, value: arguments[2]) { report(["\(namespace) \(key)"]) }
        if before != settings, shared.state.withLock({ $0.status }) != .following { shared.setStatus(.following) }
        return before != settings
    }

    /// A signal sent to this connection alone reaches it whatever the match rules say: one is the
    /// portal's when it was broadcast on the portal's path (the bus routed it by the rules on the
    /// portal's name), or sent to it by the name that answered for the portal.
    private func isFromPortal(_ message: DBusMessage) -> Bool {
        guard message.path == Self.portalPath else { return false }
        guard message.destination != nil else { return true }
        return portalOwner != nil && message.sender == portalOwner
    }
}
