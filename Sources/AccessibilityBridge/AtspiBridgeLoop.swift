internal import CDBus
import Compositor
import FoundationEssentials
import Glibc
import Dispatch
import Logging
import NodeRuntime
import TesseraDBus

/// The bridge's thread: connects, then serves until stopped or disconnected. Owns the connection,
/// the server and the calls waiting for the UI thread; nothing here is touched by another thread
/// (they reach it through `AtspiBridgeShared`).
/// - Thread: the bridge's thread (not `Sendable`).
final class AtspiBridgeLoop {
    private let seed: AtspiBridgeLoopSeed
    private var shared: AtspiBridgeShared { seed.shared }

    /// A call whose reply waits for the UI thread.
    private struct PendingCall {
        let message: DBusMessage
        let continuation: (AtspiUIResponse) -> AtspiOutcome
        let deadline: UInt64
    }

    private var pending: [Int: PendingCall] = [:]
    /// The most calls waiting for the UI thread at once.
    static let maximumPendingUICalls = 64
    private var nextToken = 1
    /// The application's windows as the thread took them last, in order.
    private var windows: [AtspiBridge.Window] = []
    /// Whether each window (by element id) had the keyboard focus when last looked at.
    private var windowWasActive: [Int: Bool] = [:]

    init(seed: AtspiBridgeLoopSeed) { self.seed = seed }

    /// "No bus" is said once per process: a test suite making many apps without a bus logs one line.
    private static let reportedUnavailable = Locked(false)

    func run() {
        let connection: DBusConnection
        let server: AtspiServer
        do {
            (connection, server) = try connect()
        } catch {
            let reason = (error as? DBusFailure)?.description ?? "\(error)"
            shared.setStatus(.unavailable(reason))
            let first = Self.reportedUnavailable.withLock { reported -> Bool in
                defer { reported = true }
                return !reported
            }
            if first {
                TesseraLog.accessibility.info("screen readers cannot reach this app (AT-SPI): \(reason); it runs without them")
            } else {
                TesseraLog.accessibility.debug("screen readers cannot reach this app (AT-SPI): \(reason)")
            }
            return
        }
        serve(connection, server)
    }

    // MARK: Connecting

    /// The session bus's address (`DBusConnection.sessionBusAddress`).
    static func sessionBusAddress(_ environment: [String: String]) -> String? {
        DBusConnection.sessionBusAddress(environment)
    }

    /// The locale AT-SPI reports: the environment's for messages.
    static func locale(_ environment: [String: String]) -> String {
        for name in ["LC_ALL", "LC_MESSAGES", "LANG"] {
            if let value = environment[name], !value.isEmpty { return value }
        }
        return "C"
    }

    private func connect() throws -> (DBusConnection, AtspiServer) {
        let configuration = seed.configuration
        let environment = configuration.environment
        let timeout = configuration.connectTimeout
        let address: String
        if let direct = environment["AT_SPI_BUS_ADDRESS"], !direct.isEmpty {
            address = direct
        } else {
            guard let session = Self.sessionBusAddress(environment) else {
                throw DBusFailure("no session bus (DBUS_SESSION_BUS_ADDRESS is unset and there is no $XDG_RUNTIME_DIR/bus)")
            }
            let sessionConnection = try DBusConnection(address: session, timeout: timeout)
            guard let question = DBusMessage.methodCall(destination: "org.a11y.Bus", path: "/org/a11y/bus",
                                                        interface: "org.a11y.Bus", member: "GetAddress") else {
                throw DBusFailure("out of memory")
            }
            let reply: DBusMessage
            do {
                reply = try sessionConnection.call(question, timeout: timeout)
            } catch {
                throw DBusFailure("the session bus has no accessibility bus (org.a11y.Bus: \(error))")
            }
            guard let found = reply.arguments()?.first?.stringValue, !found.isEmpty else {
                throw DBusFailure("org.a11y.Bus.GetAddress gave no address")
            }
            address = found
        }
        let connection: DBusConnection
        do {
            connection = try DBusConnection(address: address, timeout: timeout)
        } catch {
            throw DBusFailure("cannot open the accessibility bus: \(error)")
        }
        let server = AtspiServer(busName: connection.uniqueName, applicationName: configuration.applicationName,
                                 toolkitVersion: configuration.toolkitVersion, locale: Self.locale(environment),
                                 windowPlacement: { WindowPlacement.State() })
        guard let embed = DBusMessage.methodCall(destination: Atspi.registryName, path: Atspi.rootPath,
                                                 interface: Atspi.socket, member: "Embed"),
              embed.append([server.reference(.application)]) else {
            throw DBusFailure("out of memory")
        }
        do {
            let reply = try connection.call(embed, timeout: timeout)
            if let desktop = reply.arguments()?.first, desktop.signature == "(so)" { server.desktop = desktop }
        } catch {
            throw DBusFailure("no AT-SPI registry on the accessibility bus (\(error))")
        }
        return (connection, server)
    }

    // MARK: Serving

    private func serve(_ connection: DBusConnection, _ server: AtspiServer) {
        guard let socket = connection.fileDescriptor, shared.wakeDescriptor >= 0 else {
            shared.setStatus(.unavailable("the accessibility bus connection has no socket to wait on"))
            TesseraLog.accessibility.warning("AT-SPI: the accessibility bus connection has no socket to wait on")
            return
        }
        shared.setStatus(.connected(busName: connection.uniqueName))
        TesseraLog.accessibility.debug("AT-SPI: \(seed.configuration.applicationName) is \(connection.uniqueName) on the accessibility bus")
        let shared = self.shared
        seed.ui.post(seed.ui.publishTree)
        var lost: String?
        while lost == nil {
            let inbox = shared.state.withLock { state -> AtspiBridgeShared.State in
                let taken = state
                state.pendingTrees = [:]
                state.responses = []
                state.windowChanged = false
                state.windowsChanged = false
                return taken
            }
            if inbox.stopRequested { break }
            if inbox.windowsChanged { takeWindows(inbox.windows, server) }
            if inbox.windowsChanged || !inbox.pendingTrees.isEmpty { apply(inbox.pendingTrees, connection, server) }
            for (token, response) in inbox.responses {
                guard let call = pending.removeValue(forKey: token) else { continue }
                finish(call.message, call.continuation(response), connection, server)
            }
            if inbox.windowChanged { windowMayHaveChanged(connection, server) }
            connection.readAndWrite()
            while connection.outgoingBytes < DBusConnection.maximumOutgoingBytes, let message = connection.popMessage() {
                if message.kind == .signal, message.interface == "org.freedesktop.DBus.Local", message.member == "Disconnected" {
                    lost = "the accessibility bus closed the connection"
                    break
                }
                guard message.kind == .methodCall else { continue }
                dispatch(message, connection, server)
            }
            expireCalls(connection)
            connection.readAndWrite()
            if !connection.isConnected { lost = lost ?? "the accessibility bus connection was lost" }
            if lost != nil { break }
            // Writing reads too: messages it took in are handled before the loop sleeps (unless the
            // answers already queued must go first: then the wait is for the socket to take them).
            if connection.hasBufferedInput && connection.outgoingBytes < DBusConnection.maximumOutgoingBytes { continue }
            wait(socket: socket, writing: connection.hasOutgoingData)
        }
        for window in windows { window.placement?.setObserver(nil) }
        pending.removeAll()
        if let lost {
            shared.setStatus(.unavailable(lost))
            TesseraLog.accessibility.warning("AT-SPI: \(lost); screen readers no longer reach this app")
        } else {
            shared.setStatus(.stopped)
        }
    }

    /// Blocks in `poll()` until the bus has something, the socket can take queued output, another
    /// thread wakes the loop, or the first waiting call's time is up.
    private func wait(socket: Int32, writing: Bool) {
        var descriptors = [
            pollfd(fd: socket, events: Int16(POLLIN) | (writing ? Int16(POLLOUT) : 0), revents: 0),
            pollfd(fd: shared.wakeDescriptor, events: Int16(POLLIN), revents: 0),
        ]
        var timeout: Int32 = -1
        if let deadline = pending.values.map(\.deadline).min() {
            let now = MonotonicClock.nanoseconds()
            timeout = deadline <= now ? 0 : Int32(clamping: (deadline - now + 999_999) / 1_000_000)
        }
        let result = poll(&descriptors, 2, timeout)
        if result > 0, descriptors[1].revents != 0 { shared.drainWake() }
    }

    private func dispatch(_ message: DBusMessage, _ connection: DBusConnection, _ server: AtspiServer) {
        guard let arguments = message.arguments() else {
            finish(message, .error(.invalidArguments("arguments of a type the bridge does not read (a file descriptor)")),
                   connection, server)
            return
        }
        let call = AtspiCall(path: message.path ?? "", interface: message.interface ?? "", member: message.member ?? "",
                             arguments: arguments)
        finish(message, server.handle(call), connection, server)
    }

    private func finish(_ message: DBusMessage, _ outcome: AtspiOutcome, _ connection: DBusConnection, _ server: AtspiServer) {
        switch outcome {
        case .reply(let values):
            guard message.expectsReply, let reply = message.methodReturn() else { return }
            if reply.append(values) {
                connection.send(reply)
            } else if let error = message.errorReply(.failed("the answer could not be encoded")) {
                connection.send(error)
            }
        case .error(let error):
            guard message.expectsReply, let reply = message.errorReply(error) else { return }
            connection.send(reply)
        case .needsUI(let request, let continuation):
            // The UI thread answers at most so many calls at a time: a peer sending actions or edits
            // faster than the app takes them gets an error, and the UI thread's queue stays short.
            guard pending.count < Self.maximumPendingUICalls else {
                if message.expectsReply,
                   let reply = message.errorReply(.limitsExceeded("the app is still answering \(pending.count) calls; try again"))
                {
                    connection.send(reply)
                }
                return
            }
            let token = nextToken
            nextToken += 1
            let timeout = UInt64(max(0.01, seed.configuration.uiTimeout) * 1e9)
            pending[token] = PendingCall(message: message, continuation: continuation,
                                        deadline: MonotonicClock.nanoseconds() + timeout)
            let shared = self.shared
            let answer = seed.ui.answer
            // The window whose tree holds the element answers (none: the request finds nothing).
            let window = server.window(of: request)
            seed.ui.post {
                let response = window.map { answer(request, $0) } ?? request.unanswered
                shared.deliver(token: token, response: response)
            }
        }
    }

    private func expireCalls(_ connection: DBusConnection) {
        let now = MonotonicClock.nanoseconds()
        for (token, call) in pending where call.deadline <= now {
            pending[token] = nil
            let seconds = seed.configuration.uiTimeout
            if call.message.expectsReply,
               let reply = call.message.errorReply(.timedOut("the app's UI thread did not answer within \(seconds) s")) {
                connection.send(reply)
            }
        }
    }

    /// Takes the windows the UI thread listed: follows the placements of those that came, lets go of
    /// those that went. Their trees change with the next `apply`.
    private func takeWindows(_ listed: [AtspiBridge.Window], _ server: AtspiServer) {
        let listedIDs = Set(listed.map(\.id))
        for window in windows where !listedIDs.contains(window.id) {
            window.placement?.setObserver(nil)
            windowWasActive[window.id] = nil
        }
        let known = Set(windows.map(\.id))
        let shared = self.shared
        for window in listed where !known.contains(window.id) {
            window.placement?.setObserver { _ in
                shared.state.withLock { $0.windowChanged = true }
                shared.wake()
            }
            windowWasActive[window.id] = window.placement?.state.isActive ?? false
        }
        windows = listed
        server.placements = Dictionary(listed.compactMap { window in window.placement.map { (window.id, $0) } },
                                       uniquingKeysWith: { first, _ in first })
    }

    /// Takes the trees the UI thread published (by window) into a snapshot of the listed windows
    /// that have a tree: answers from it from now on and sends the events that lead to it.
    private func apply(_ trees: [Int: AccessibilityTree], _ connection: DBusConnection, _ server: AtspiServer) {
        let old = server.snapshot
        let parts = windows.compactMap { window -> AtspiSnapshot.Window? in
            if let tree = trees[window.id] { return AtspiSnapshot.Window(tree: tree) }
            return old.window(id: window.id)
        }
        let snapshot = AtspiSnapshot(windows: parts)
        guard snapshot.windowIDs != old.windowIDs || !trees.isEmpty else { return }
        var signals: [AtspiSignal] = []
        let opened = Set(snapshot.windowIDs).subtracting(old.windowIDs)
        for signal in AtspiEvents.signals(from: old, to: snapshot, changed: Set(trees.keys)) {
            signals.append(signal)
            // A window that had the keyboard focus before it showed (before the bridge connected, or
            // before its first tree) is announced with its "add", as a toolkit announces its window
            // when it is activated.
            if signal.object == .application, signal.detail == "add", case .object(.element(let id)) = signal.value,
               opened.contains(id), windowWasActive[id] == true {
                signals += AtspiEvents.windowActivation(window: id, isActive: true)
            }
        }
        server.replaceSnapshot(snapshot)
        emit(signals, connection, server)
    }

    private func windowMayHaveChanged(_ connection: DBusConnection, _ server: AtspiServer) {
        for window in windows {
            let active = window.placement?.state.isActive ?? false
            guard active != windowWasActive[window.id] else { continue }
            windowWasActive[window.id] = active
            if server.snapshot.window(id: window.id) != nil {
                emit(AtspiEvents.windowActivation(window: window.id, isActive: active), connection, server)
            }
        }
    }

    private func emit(_ signals: [AtspiSignal], _ connection: DBusConnection, _ server: AtspiServer) {
        for signal in signals {
            guard let message = DBusMessage.signal(path: signal.object.path, interface: signal.interface, member: signal.member),
                  message.append(signal.arguments(reference: server.reference)) else { continue }
            connection.send(message)
        }
    }
}
