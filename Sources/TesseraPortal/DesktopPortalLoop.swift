internal import CDBus
import FoundationEssentials
import Glibc
import Dispatch
import Logging
import NodeRuntime
import TesseraDBus

/// The portal's thread: connects once, then takes requests, sends their calls without blocking,
/// matches replies by serial and `Response` signals by request path, and ends each one that runs
/// past its deadline. Owns the connection and every pending request; other threads reach it only
/// through `DesktopPortalShared`.
/// - Thread: the portal's thread (not `Sendable`).
final class DesktopPortalLoop {
    private typealias Messages = PortalMessages

    /// A method call sent and not answered yet.
    private struct PendingCall {
        var deadline: Double
        /// The reply (a method return or an error); nil when the deadline passed or the bus went away.
        var finish: (DBusMessage?) -> Void
    }

    /// A request the portal holds (or will, once it answers the call), waiting for its `Response`.
    private struct PendingRequest {
        var deadline: Double
        /// The `Response`'s arguments; or the error that ended the wait.
        var finish: (Result<[DBusValue]?, PortalError>) -> Void
    }

    /// Where a posted notification went.
    private enum NotificationRoute {
        case portal
        case server(UInt32)
    }

    private let seed: DesktopPortalLoopSeed
    private var shared: DesktopPortalShared { seed.shared }
    private var configuration: DesktopPortal.Configuration { seed.configuration }
    private var connection: DBusConnection?
    /// Why there is no connection (said in fallbacks' errors).
    private var unavailableReason = "not connected"
    private var calls: [UInt32: PendingCall] = [:]
    private var requests: [String: PendingRequest] = [:]
    private var tokenCount = 0
    private var notificationRoutes: [String: NotificationRoute] = [:]
    /// The server's ids of the notifications it shows for this app: the app's id and default action.
    private var serverNotifications: [UInt32: (id: String, defaultAction: String?)] = [:]
    /// The unique names that answered for the portal and the notification server: signals from
    /// anyone else are not taken as theirs.
    private var portalOwner: String?
    private var serverOwner: String?
    /// Set once `serve()` has returned: nothing more is sent, and calls ending now end as stopped
    /// (not through their fallbacks).
    private var stopping = false
    /// `Response`s that came on a request's predicted path before the portal answered its call, from
    /// a sender not known as the portal's: kept (a few per request) until the call's reply names the
    /// portal's owner, then taken only if that owner sent one.
    private var earlyResponses: [String: [DBusMessage]] = [:]
    private static let maximumEarlyResponses = 4
    /// "No bus" is said once per process.
    private static let reportedUnavailable = Locked(false)

    init(seed: DesktopPortalLoopSeed) { self.seed = seed }

    static func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

    func run() {
        connect()
        serve()
        stopping = true
        // Stopped: what is still waiting ends now; requests the portal holds are closed.
        for (path, _) in requests { closeRequest(path) }
        connection?.readAndWrite()
        let waiting = requests.values.map(\.finish)
        let waitingCalls = calls.values.map(\.finish)
        requests.removeAll()
        calls.removeAll()
        earlyResponses.removeAll()
        for finish in waiting { finish(.failure(.stopped)) }
        for finish in waitingCalls { finish(nil) }
        for command in shared.state.withLock({ state -> [DesktopPortalCommand] in
            defer { state.commands.removeAll() }
            return state.commands
        }) { command.fail(.stopped, shared: shared) }
        shared.setStatus(.stopped)
    }

    private func connect() {
        let timeout = configuration.callTimeout
        guard let address = DBusConnection.sessionBusAddress(configuration.environment) else {
            return unavailable("DBUS_SESSION_BUS_ADDRESS is unset and there is no $XDG_RUNTIME_DIR/bus")
        }
        do {
            let made = try DBusConnection(address: address, timeout: timeout)
            // Subscribed before any request is made, as the portal spec asks: a `Response` may come
            // before the call's reply. The bus delivers only the portal's own signals (its name as sender).
            try made.addMatch("type='signal',sender='\(Messages.desktopName)',interface='\(Messages.requestInterface)',"
                              + "member='Response',path_namespace='\(Messages.requestFolder(uniqueName: made.uniqueName))'",
                              timeout: timeout)
            try made.addMatch("type='signal',sender='\(Messages.desktopName)',interface='\(Messages.notificationInterface)',"
                              + "member='ActionInvoked'", timeout: timeout)
            try made.addMatch("type='signal',sender='\(Messages.notificationsName)',interface='\(Messages.notificationsInterface)'",
                              timeout: timeout)
            connection = made
            shared.setStatus(.connected)
        } catch {
            unavailable((error as? DBusFailure)?.description ?? "\(error)")
        }
    }

    private func unavailable(_ reason: String) {
        unavailableReason = reason
        shared.setStatus(.unavailable(reason))
        let first = Self.reportedUnavailable.withLock { reported -> Bool in
            defer { reported = true }
            return !reported
        }
        let line = "no session bus for the desktop's portals (\(reason)): links open with xdg-open, files through the in-app chooser"
        if first { TesseraLog.portals.info("\(line)") } else { TesseraLog.portals.debug("\(line)") }
    }

    // MARK: The loop

    private func serve() {
        while true {
            if shared.state.withLock({ $0.stopRequested }) { return }
            let commands = shared.state.withLock { state -> [DesktopPortalCommand] in
                defer { state.commands.removeAll() }
                return state.commands
            }
            for command in commands { take(command) }
            if let connection {
                connection.readAndWrite()
                while let message = connection.popMessage() {
                    if message.kind == .signal, message.interface == "org.freedesktop.DBus.Local", message.member == "Disconnected" {
                        lose("the session bus closed the connection")
                        break
                    }
                    dispatch(message)
                }
                if self.connection != nil, !connection.isConnected { lose("the session bus connection was lost") }
            }
            expireDeadlines()
            if let connection, connection.hasBufferedInput { continue }
            var descriptors = [pollfd(fd: shared.wakeDescriptor, events: Int16(POLLIN), revents: 0)]
            if let connection, let socket = connection.fileDescriptor {
                descriptors.append(pollfd(fd: socket, events: Int16(POLLIN) | (connection.hasOutgoingData ? Int16(POLLOUT) : 0),
                                          revents: 0))
            }
            // Sleeps until the bus, a request, `stop()` or the nearest deadline wakes it.
            let result = poll(&descriptors, nfds_t(descriptors.count), pollTimeout())
            if result > 0, descriptors[0].revents != 0 { shared.drainWake() }
        }
    }

    /// Milliseconds to the nearest deadline (-1: none, wait for the bus or a request).
    private func pollTimeout() -> Int32 {
        let nearest = min(calls.values.map(\.deadline).min() ?? .infinity, requests.values.map(\.deadline).min() ?? .infinity)
        guard nearest.isFinite else { return -1 }
        let milliseconds = ((nearest - Self.now()) * 1000).rounded(.up)
        return Int32(max(0, min(milliseconds, 3_600_000)))
    }

    private func expireDeadlines() {
        let now = Self.now()
        for (serial, call) in calls where call.deadline <= now {
            calls[serial] = nil
            call.finish(nil)
        }
        for (path, request) in requests where request.deadline <= now {
            requests[path] = nil
            request.finish(.failure(.timedOut(seconds: configuration.responseTimeout)))
        }
    }

    /// The connection is gone: calls waiting end as unanswered (their fallbacks run), requests waiting
    /// for a `Response` end with an error.
    private func lose(_ reason: String) {
        connection = nil
        unavailable(reason)
        TesseraLog.portals.warning("desktop portals: \(reason)")
        let waitingCalls = calls.values.map(\.finish)
        let waiting = requests.values.map(\.finish)
        calls.removeAll()
        requests.removeAll()
        earlyResponses.removeAll()
        for finish in waitingCalls { finish(nil) }
        for finish in waiting { finish(.failure(.failed(reason))) }
    }

    // MARK: Sending

    /// Sends `message` and calls `finish` with its reply, or nil after `callTimeout`.
    private func send(_ message: DBusMessage, finish: @escaping (DBusMessage?) -> Void) {
        guard !stopping, let connection, connection.send(message) else { return finish(nil) }
        let serial = dbus_message_get_serial(message.pointer)
        calls[serial] = PendingCall(deadline: Self.now() + configuration.callTimeout, finish: finish)
        connection.readAndWrite()
    }

    /// Sends `message` expecting no reply.
    private func sendWithoutReply(_ message: DBusMessage) {
        dbus_message_set_no_reply(message.pointer, 1)
        connection?.send(message)
        connection?.readAndWrite()
    }

    private func nextToken() -> String {
        tokenCount += 1
        return "tessera\(tokenCount)"
    }

    /// `org.freedesktop.portal.Request.Close` on a request the portal holds: its dialog goes away.
    private func closeRequest(_ path: String) {
        guard DBusValue.isValidObjectPath(path),
              let close = DBusMessage.methodCall(destination: Messages.desktopName, path: path,
                                                 interface: Messages.requestInterface, member: "Close") else { return }
        sendWithoutReply(close)
    }

    /// Makes a portal request: subscribes to its `Response` at the predicted path, calls `member`, and
    /// calls `finish` once with the `Response`'s arguments, or `noPortal` (with why) when the bus has
    /// no portal or it did not answer the call, or an error.
    private func request(interface: String, member: String, token: String, arguments: (String) -> [DBusValue],
                         noPortal: @escaping (String) -> Void, finish: @escaping (Result<[DBusValue]?, PortalError>) -> Void) {
        guard let connection else { return noPortal(unavailableReason) }
        let predicted = Messages.requestPath(uniqueName: connection.uniqueName, token: token)
        guard let call = DBusMessage.methodCall(destination: Messages.desktopName, path: Messages.desktopPath,
                                                interface: interface, member: member),
              call.append(arguments(token)) else {
            return finish(.failure(.failed("the call \(member) could not be made (a value is not well-formed)")))
        }
        // Waits for the call's reply first (the deadline moves once the portal has taken the request).
        requests[predicted] = PendingRequest(deadline: .infinity, finish: finish)
        send(call) { [self] reply in
            let early = earlyResponses.removeValue(forKey: predicted) ?? []
            guard requests[predicted] != nil else { return }  // answered already, or stopped
            guard let reply else {
                requests[predicted] = nil
                // A portal that is only slow may still make the request (and show its dialog): closed,
                // since the fallback answers this one.
                closeRequest(predicted)
                return noPortal("the portal did not answer \(member) within \(configuration.callTimeout) s")
            }
            if reply.kind == .error {
                requests[predicted] = nil
                let name = reply.errorName ?? ""
                if Messages.meansNoPortal(name) { return noPortal("\(name)") }
                let text = reply.arguments()?.first?.stringValue.map { String($0.prefix(200)) } ?? ""
                return finish(.failure(.failed(text.isEmpty ? name : "\(name): \(text)")))
            }
            portalOwner = reply.sender ?? portalOwner
            guard let arguments = reply.arguments(), arguments.count == 1, case .objectPath(let handle) = arguments[0] else {
                requests[predicted] = nil
                closeRequest(predicted)
                return finish(.failure(.malformedAnswer("\(member) answered (\(reply.signature)), not (o)")))
            }
            var pending = requests.removeValue(forKey: predicted)!
            pending.deadline = Self.now() + configuration.responseTimeout
            let timeout = configuration.responseTimeout
            let wrapped = pending.finish
            pending.finish = { [self] result in
                if case .failure(.timedOut) = result {
                    TesseraLog.portals.warning("the portal sent no Response to \(member) in \(timeout) s; the request is closed")
                    closeRequest(handle)
                }
                wrapped(result)
            }
            if handle == predicted, let owner = reply.sender,
               let response = early.first(where: { $0.sender == owner }) {
                // The portal's own Response came before its reply.
                return pending.finish(.success(response.arguments()))
            }
            if handle != predicted {
                // A portal older than handle_token: its own path, subscribed to now.
                let rule = "type='signal',sender='\(Messages.desktopName)',interface='\(Messages.requestInterface)',member='Response',path='\(handle)'"
                if let match = DBusMessage.methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                                                      interface: "org.freedesktop.DBus", member: "AddMatch"),
                   match.append([.string(rule)]) { sendWithoutReply(match) }
            }
            requests[handle] = pending
        }
    }

    // MARK: Requests

    private func take(_ command: DesktopPortalCommand) {
        switch command {
        case let .openURI(uri, parentWindow, ask, completion):
            openURI(uri, parentWindow: parentWindow, ask: ask) { [shared] result in shared.deliver(completion, result) }
        case let .chooseFiles(options, parentWindow, completion):
            chooseFiles(options, parentWindow: parentWindow, completion: completion)
        case let .addNotification(notification, completion):
            addNotification(notification) { [shared] result in shared.deliver(completion, result) }
        case let .removeNotification(id):
            removeNotification(id)
        }
    }

    private func openURI(_ uri: String, parentWindow: String, ask: Bool, finish: @escaping @Sendable (Result<OpenURIOutcome, PortalError>) -> Void) {
        let environment = configuration.environment
        let timeout = configuration.callTimeout
        request(interface: Messages.openURIInterface, member: "OpenURI", token: nextToken(), arguments: { token in
            Messages.openURIArguments(uri: uri, parentWindow: parentWindow, token: token, ask: ask)
        }, noPortal: { reason in
            TesseraLog.portals.info("no OpenURI portal (\(reason)): the link opens with xdg-open")
            XDGOpen.open(uri, environment: environment, timeout: timeout, completion: finish)
        }, finish: { result in
            finish(result.flatMap { arguments in
                Messages.response(arguments).flatMap { response in
                    switch response {
                    case .success: return .success(.opened(.portal))
                    case .cancelled: return .success(.cancelled)
                    case .failed: return .failure(.failed("OpenURI ended with Response 2"))
                    }
                }
            })
        })
    }

    private func chooseFiles(_ options: FileChooserOptions, parentWindow: String,
                             completion: @escaping @MainActor @Sendable (Result<[URL]?, PortalError>) -> Void) {
        let shared = shared
        var member = ""
        request(interface: Messages.fileChooserInterface, member: options.mode == .save ? "SaveFile" : "OpenFile", token: nextToken(),
                arguments: { token in
            let call = Messages.fileChooserCall(options, parentWindow: parentWindow, token: token)
            member = call.member
            return call.arguments
        }, noPortal: { reason in
            TesseraLog.portals.info("no FileChooser portal (\(reason)): the in-app chooser is used")
            shared.post {
                let fallback = shared.state.withLock { $0.fileChooserFallback }
                guard let fallback else { return completion(.failure(.portalUnavailable(reason))) }
                fallback(options, completion)
            }
        }, finish: { result in
            let outcome: Result<[URL]?, PortalError> = result.flatMap { arguments in
                Messages.response(arguments).flatMap { response in
                    switch response {
                    case .success(let results): return Messages.chosenFiles(results).map { Optional($0) }
                    case .cancelled: return .success(nil)
                    case .failed: return .failure(.failed("\(member) ended with Response 2"))
                    }
                }
            }
            if case .failure(let error) = outcome, error != .stopped {
                TesseraLog.portals.warning("file chooser: \(error)")
            }
            shared.deliver(completion, outcome)
        })
    }

    private func addNotification(_ notification: DesktopNotification, finish: @escaping (Result<DesktopRoute, PortalError>) -> Void) {
        guard connection != nil else { return finish(.failure(.noSessionBus(unavailableReason))) }
        guard let call = DBusMessage.methodCall(destination: Messages.desktopName, path: Messages.desktopPath,
                                                interface: Messages.notificationInterface, member: "AddNotification"),
              call.append(Messages.addNotificationArguments(notification)) else {
            return finish(.failure(.failed("AddNotification could not be made (a value is not well-formed)")))
        }
        send(call) { [self] reply in
            guard let reply else {
                if stopping { return finish(.failure(.stopped)) }
                return notify(notification, reason: "no answer within \(configuration.callTimeout) s", finish: finish)
            }
            if reply.kind == .error {
                let name = reply.errorName ?? ""
                if Messages.meansNoPortal(name) { return notify(notification, reason: name, finish: finish) }
                return finish(.failure(.failed(name)))
            }
            portalOwner = reply.sender ?? portalOwner
            if case .server(let old) = notificationRoutes[notification.id] { serverNotifications[old] = nil }
            notificationRoutes[notification.id] = .portal
            finish(.success(.portal))
        }
    }

    /// The fallback: the notification server's `Notify`.
    private func notify(_ notification: DesktopNotification, reason: String, finish: @escaping (Result<DesktopRoute, PortalError>) -> Void) {
        TesseraLog.portals.debug("no Notification portal (\(reason)): org.freedesktop.Notifications is used")
        var replacing: UInt32 = 0
        if case .server(let old) = notificationRoutes[notification.id] { replacing = old }
        guard let call = DBusMessage.methodCall(destination: Messages.notificationsName, path: Messages.notificationsPath,
                                                interface: Messages.notificationsInterface, member: "Notify"),
              call.append(Messages.notifyArguments(notification, applicationName: configuration.applicationName, replacing: replacing))
        else { return finish(.failure(.failed("Notify could not be made (a value is not well-formed)"))) }
        send(call) { [self] reply in
            guard let reply else {
                if stopping { return finish(.failure(.stopped)) }
                return finish(.failure(.fallbackFailed("no notification portal (\(reason)) and no answer from \(Messages.notificationsName)")))
            }
            if reply.kind == .error {
                return finish(.failure(.fallbackFailed("no notification portal (\(reason)); \(Messages.notificationsName): \(reply.errorName ?? "")")))
            }
            guard let arguments = reply.arguments(), arguments.count == 1, let serverID = arguments[0].uint32Value else {
                return finish(.failure(.malformedAnswer("Notify answered (\(reply.signature)), not (u)")))
            }
            serverOwner = reply.sender ?? serverOwner
            if replacing != 0 { serverNotifications[replacing] = nil }
            serverNotifications[serverID] = (notification.id, notification.defaultAction)
            notificationRoutes[notification.id] = .server(serverID)
            finish(.success(.fallback))
        }
    }

    private func removeNotification(_ id: String) {
        switch notificationRoutes.removeValue(forKey: id) {
        case .portal:
            if let call = DBusMessage.methodCall(destination: Messages.desktopName, path: Messages.desktopPath,
                                                 interface: Messages.notificationInterface, member: "RemoveNotification"),
               call.append([.string(id)]) { sendWithoutReply(call) }
        case .server(let serverID):
            serverNotifications[serverID] = nil
            if let call = DBusMessage.methodCall(destination: Messages.notificationsName, path: Messages.notificationsPath,
                                                 interface: Messages.notificationsInterface, member: "CloseNotification"),
               call.append([.uint32(serverID)]) { sendWithoutReply(call) }
        case nil:
            break
        }
    }

    // MARK: Incoming

    private func dispatch(_ message: DBusMessage) {
        switch message.kind {
        case .methodReturn, .error:
            let serial = dbus_message_get_reply_serial(message.pointer)
            if let call = calls.removeValue(forKey: serial) { call.finish(message) }
        case .signal:
            take(signal: message)
        case .methodCall:
            // Nothing is served here: a caller gets an error rather than waiting for its time-out.
            if message.expectsReply,
               let reply = message.errorReply(.unknownObject(message.path ?? "/")) { connection?.send(reply) }
        case .other:
            break
        }
    }

    private func take(signal message: DBusMessage) {
        let interface = message.interface ?? ""
        let member = message.member ?? ""
        switch (interface, member) {
        case (Messages.requestInterface, "Response"):
            guard let path = message.path, let request = requests[path] else { return }
            if let owner = portalOwner, message.sender == owner {
                requests[path] = nil
                return request.finish(.success(message.arguments()))
            }
            // Not (yet) known as the portal's: before the call's reply (which names the portal's
            // owner), kept for it to decide; after, refused.
            guard request.deadline == .infinity, earlyResponses[path, default: []].count < Self.maximumEarlyResponses else { return }
            earlyResponses[path, default: []].append(message)
        case (Messages.notificationInterface, "ActionInvoked"):
            guard isFromPortal(message) else { return }
            guard let arguments = message.arguments(), arguments.count == 2 || arguments.count == 3,
                  let id = arguments[0].stringValue, let action = arguments[1].stringValue,
                  id.utf8.count <= DesktopPortal.maximumActionLength, action.utf8.count <= DesktopPortal.maximumActionLength else {
                TesseraLog.portals.warning("the portal's ActionInvoked has arguments (\(message.signature)), not (ssav) within the limits; ignored")
                return
            }
            var parameter: String?
            if arguments.count == 3, case .array("v", let values) = arguments[2], case .variant(.string(let text))? = values.first,
               text.utf8.count <= DesktopPortal.maximumActionLength {
                parameter = text
            }
            shared.deliverAction(NotificationAction(notificationID: id, action: action, parameter: parameter, route: .portal))
        case (Messages.notificationsInterface, "ActionInvoked"):
            guard isFromServer(message), let arguments = message.arguments(), arguments.count == 2,
                  let serverID = arguments[0].uint32Value, let key = arguments[1].stringValue,
                  let notification = serverNotifications[serverID] else { return }
            let action = key == "default" ? (notification.defaultAction ?? key) : key
            guard action.utf8.count <= DesktopPortal.maximumActionLength else { return }
            shared.deliverAction(NotificationAction(notificationID: notification.id, action: action, route: .fallback))
        case (Messages.notificationsInterface, "NotificationClosed"):
            guard isFromServer(message), let serverID = message.arguments()?.first?.uint32Value,
                  let notification = serverNotifications.removeValue(forKey: serverID) else { return }
            if case .server(serverID) = notificationRoutes[notification.id] { notificationRoutes[notification.id] = nil }
        default:
            break
        }
    }

    /// A signal sent to this connection alone reaches it whatever the match rules say: one is taken
    /// as the portal's only from the name that answered for the portal, or, before any answer, only
    /// when it was broadcast (no destination), which the bus routed by the rule on the portal's name.
    private func isFromPortal(_ message: DBusMessage) -> Bool {
        guard let owner = portalOwner else { return message.destination == nil }
        return message.sender == owner
    }

    private func isFromServer(_ message: DBusMessage) -> Bool {
        guard let owner = serverOwner else { return message.destination == nil }
        return message.sender == owner
    }
}
