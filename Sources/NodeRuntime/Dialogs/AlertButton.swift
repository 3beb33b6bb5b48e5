import Compositor

/// One button of an `Alert`: its title, its role and what it does.
///
/// ```swift
/// Alert(title: "Sign out?", message: "You will need your password to sign in again.",
///       buttons: [.cancel("Cancel"), .destructive("Sign Out") { session.signOut() }])
/// ```
/// The handler runs once, on the UI thread, after the alert has left the screen and the focus has
/// gone back to where it was, so it may present another alert or move the focus itself.
/// - Thread: any (a value; the handler runs on main)
public struct AlertButton: Sendable {
    /// What a button means, which decides how it looks and which keys reach it.
    /// - Thread: any (a value)
    public enum Role: Sendable, Hashable {
        /// The suggested answer: filled with the accent colour; it has the focus when the alert opens
        /// and Enter chooses it when the focus is not on another button. An alert has at most one:
        /// the first `.default` button counts, the others look and act like `.plain`.
        case `default`
        /// Leaves things as they were: Escape chooses it (an alert without one ignores Escape).
        case cancel
        /// Destroys something (delete, sign out): its title is in the theme's `.destructive` colour.
        case destructive
        /// Any other answer.
        case plain
    }

    /// The button's text: a verb that says what it does ("Sign Out", not "Yes").
    public var title: String
    /// What the button means (see `Role`).
    public var role: Role
    /// Runs after the alert ended because this button was chosen; nil: the alert only ends.
    public var handler: (@MainActor @Sendable () -> Void)?

    /// A button titled `title` with `role`, running `handler` when chosen.
    public init(_ title: String, role: Role = .plain, handler: (@MainActor @Sendable () -> Void)? = nil) {
        self.title = title
        self.role = role
        self.handler = handler
    }

    /// The suggested answer (see `Role.default`).
    public static func `default`(_ title: String, handler: (@MainActor @Sendable () -> Void)? = nil) -> AlertButton {
        AlertButton(title, role: .default, handler: handler)
    }

    /// The answer that changes nothing; Escape chooses it (see `Role.cancel`).
    public static func cancel(_ title: String, handler: (@MainActor @Sendable () -> Void)? = nil) -> AlertButton {
        AlertButton(title, role: .cancel, handler: handler)
    }

    /// An answer that destroys something (see `Role.destructive`).
    public static func destructive(_ title: String, handler: (@MainActor @Sendable () -> Void)? = nil) -> AlertButton {
        AlertButton(title, role: .destructive, handler: handler)
    }

    /// Another answer (see `Role.plain`).
    public static func plain(_ title: String, handler: (@MainActor @Sendable () -> Void)? = nil) -> AlertButton {
        AlertButton(title, role: .plain, handler: handler)
    }
}

/// A dialog's push button in the theme's colours: the accent fill for the suggested answer, the
/// theme's `.fill` with `.label` (or `.destructive`) text for the others; pressed and hovered shades
/// are mixed from those, so light, dark and high contrast all follow the theme.
final class DialogButtonNode: ButtonNode, @unchecked Sendable {
    /// Whether it shows as the suggested answer, filled with the accent. (set once, in init)
    let isSuggested: Bool
    /// Whether its title is in the theme's `.destructive` colour. (set once, in init)
    let isDestructive: Bool

    init(title: String, suggested: Bool, destructive: Bool) {
        isSuggested = suggested
        isDestructive = destructive
        super.init()
        debugName = "dialog button \(title)"
        cornerRadius = DialogMetrics.buttonCornerRadius
        contentInsets = EdgeInsets(top: 9, left: 16, bottom: 9, right: 16)
        titleNode.options = TextLayoutOptions(maximumNumberOfLines: 1)
        applyTheme(title: title)
    }

    /// Sets the title and the backgrounds for every state in the current theme colours (and records
    /// that the button depends on them).
    private func applyTheme(title: String) {
        let fill = themeColor(isSuggested ? .accent : .fill)
        let text: ThemeColor = isSuggested ? .onAccent : (isDestructive ? .destructive : .label)
        let shade = themeColor(.label)
        setTitle(title, attributes: .themed(font: .system(size: 15, bold: isSuggested || isDestructive), text))
        setBackgroundColor(fill)
        setBackgroundColor(DialogMetrics.mix(fill, shade, 0.08), for: .hovered)
        setBackgroundColor(DialogMetrics.mix(fill, shade, 0.18), for: .highlighted)
    }

    override func appearanceDidChange(_ change: AppearanceChange) {
        super.appearanceDidChange(change)
        guard change.contains(.colors) else { return }
        applyTheme(title: title(for: .normal)?.string ?? "")
    }
}

/// The sizes dialogs share, in points, and their colour arithmetic.
enum DialogMetrics {
    /// Space kept between a dialog's card and the window's edges.
    static let windowMargin = 24.0
    /// An alert's card width when the window leaves room for it.
    static let alertWidth = 360.0
    /// The widest an alert's card gets (a narrower window makes it narrower).
    static let alertMaximumWidth = 400.0
    static let cardPadding = 24.0
    static let cardCornerRadius = 14.0
    static let buttonCornerRadius = 8.0
    static let buttonSpacing = 12.0
    /// How dark the dim over the window is (black, this opaque), in light and in dark appearances.
    static let dimAlphaLight: UInt8 = 0x59
    static let dimAlphaDark: UInt8 = 0x80
    /// How long a dialog takes to fade in, in seconds.
    static let fadeDuration = 0.15

    /// `base` moved `amount` (0–1) of the way to `other`, channel by channel; the alpha of `base`.
    static func mix(_ base: Color, _ other: Color, _ amount: Double) -> Color {
        func channel(_ a: UInt8, _ b: UInt8) -> UInt8 {
            UInt8(max(0, min(255, (Double(a) + (Double(b) - Double(a)) * amount).rounded())))
        }
        return Color(red: channel(base.red, other.red), green: channel(base.green, other.green),
                     blue: channel(base.blue, other.blue), alpha: base.alpha)
    }
}
