import FoundationEssentials
import Glibc
import Dispatch
import NodeRuntime
import TesseraPortal

/// The desktop around the app: links, files and notifications through `desktopPortal`, with this
/// window as the portals' parent window.
///
/// ```swift
/// app.openURL(URL(string: "https://example.com")!)
/// app.chooseFiles(FileChooserOptions(filters: [.images])) { result in
///     if case .success(let urls?) = result { attach(urls) }      // nil: cancelled
/// }
/// app.postNotification(DesktopNotification(id: "message-42", title: "Ada", body: "Lunch?",
///                                          buttons: [.init(label: "Reply", action: "reply")],
///                                          defaultAction: "open"))
/// app.desktopPortal.setNotificationActionHandler { action in open(action.notificationID) }
/// ```
/// - Thread: main, every member.
extension Application {
    static func makeDesktopPortal(_ configuration: Configuration, environment: [String: String]) -> DesktopPortal {
        let runtime = Runtime.shared
        return DesktopPortal(configuration: configuration.portalConfiguration ?? DesktopPortal.Configuration(environment: environment),
                             post: { work in runtime.mainQueue.enqueue(work) })
    }

    /// Sets the in-app file chooser as the portal's fallback, and the link action of text nodes
    /// without a handler: the current application's `openLinkByDefault`.
    func installPortalFallbacks() {
        desktopPortal.setFileChooserFallback { [weak self] options, completion in
            guard let self else { return completion(.failure(.stopped)) }
            self.presentFileChooser(options, completion: completion)
        }
        TextNode.defaultLinkTapHandler = { link in Application.current?.openLinkByDefault(link) }
    }

    /// The window as the portals name a parent window: "x11:<hex id>" on X11, "" otherwise (headless,
    /// Wayland: the portal's dialog then has no parent).
    public var portalParentWindow: String {
        compositor.window?.windowPlacement.windowSystemIdentifier ?? ""
    }

    /// Whether a tapped link without a handler is opened: `Configuration.opensLinks`; when nil, with
    /// a window unless the environment says `TESSERA_OPEN_LINKS=0` (tests that click links in a
    /// window set it, so that no browser starts).
    public var opensLinks: Bool {
        if let chosen = configuration.opensLinks { return chosen }
        return !isHeadless && ProcessInfo.processInfo.environment["TESSERA_OPEN_LINKS"] != "0"
    }

    /// Opens `url` in the desktop's app for it (`DesktopPortal.openURI`; `xdg-open` without a
    /// portal), over this window. Any scheme: the app decides.
    public func openURL(_ url: URL, completion: (@MainActor @Sendable (Result<OpenURIOutcome, PortalError>) -> Void)? = nil) {
        desktopPortal.openURI(url, parentWindow: portalParentWindow, completion: completion)
    }

    /// Opens a link's value when its scheme is allowed (`DesktopPortal.openLink`: http, https and
    /// mailto by default).
    public func openLink(_ link: String, completion: (@MainActor @Sendable (Result<OpenURIOutcome, PortalError>) -> Void)? = nil) {
        desktopPortal.openLink(link, parentWindow: portalParentWindow, completion: completion)
    }

    /// What a tapped link without a `linkTapHandler` does: `openLink` when `opensLinks`, the
    /// failure logged (`TesseraLog.portals`); nothing otherwise.
    public func openLinkByDefault(_ link: String) {
        guard opensLinks else { return }
        openLink(link) { result in
            if case .failure(let error) = result {
                TesseraLog.portals.warning("the link \(link.prefix(120)) was not opened: \(error)")
            }
        }
    }

    /// Asks the user for files with the desktop's chooser over this window (`DesktopPortal.chooseFiles`),
    /// or the in-app one (`FileChooserController`) when the desktop has none.
    public func chooseFiles(_ options: FileChooserOptions,
                            completion: @escaping @MainActor @Sendable (Result<[URL]?, PortalError>) -> Void) {
        desktopPortal.chooseFiles(options, parentWindow: portalParentWindow, completion: completion)
    }

    /// Posts a notification (`DesktopPortal.postNotification`); actions on it reach
    /// `desktopPortal.setNotificationActionHandler`'s handler.
    public func postNotification(_ notification: DesktopNotification,
                                 completion: (@MainActor @Sendable (Result<DesktopRoute, PortalError>) -> Void)? = nil) {
        desktopPortal.postNotification(notification, completion: completion)
    }

    /// Shows the in-app file chooser in place of the root controller until it answers, then puts the
    /// root back. One at a time: another request meanwhile ends with `PortalError.failed`.
    public func presentFileChooser(_ options: FileChooserOptions,
                                   completion: @escaping @MainActor (Result<[URL]?, PortalError>) -> Void) {
        if host.rootController is FileChooserController {
            return completion(.failure(.failed("a file chooser is open already")))
        }
        let previousController = host.rootController
        let previousNode = previousController == nil ? host.rootNode : nil
        let chooser = FileChooserController(options: options) { [weak self] result in
            if let self {
                if let previousController { self.host.setRootController(previousController) } else { self.host.setRootNode(previousNode) }
            }
            completion(result)
        }
        host.setRootController(chooser)
    }

    /// The in-app file chooser shown now, if any.
    public var presentedFileChooser: FileChooserController? { host.rootController as? FileChooserController }
}
