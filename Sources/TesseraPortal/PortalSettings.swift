public import Compositor
import FoundationEssentials
import Glibc
import Compositor
import Dispatch
public import NodeRuntime
import TesseraDBus

/// What the desktop's settings say about the appearance, as read from the XDG settings portal
/// (`org.freedesktop.portal.Settings`), each value kept only when it has the documented type and a
/// usable value, and the appearance that follows from them (`appearance(environment:)`).
///
/// Namespaces and keys read:
/// - `org.freedesktop.appearance`: `color-scheme` (u: 0 no preference, 1 prefer dark, 2 prefer light),
///   `accent-color` ((ddd): red, green, blue in 0…1), `contrast` (u: 0 normal, 1 high),
///   `reduced-motion` (u: 0 no preference, 1 reduce);
/// - `org.gnome.desktop.interface`: `color-scheme` (s: "default", "prefer-dark", "prefer-light"),
///   `gtk-theme` (s), `text-scaling-factor` (d), `enable-animations` (b), `font-name` (s);
/// - `org.gnome.desktop.a11y.interface`: `high-contrast` (b).
///
/// A value of another type, a number outside its documented set, a NaN or out-of-range colour
/// channel, or a text scale that is not a finite positive number is dropped (reported once per key,
/// `TesseraLog.appearance`) and the next source decides, as if the key were absent.
/// - Thread: any (a value)
public struct PortalSettings: Hashable, Sendable {
    /// `org.freedesktop.appearance color-scheme`: 1 or 2 (0 and unknown numbers are not kept).
    public var colorScheme: UInt32?
    /// `org.freedesktop.appearance accent-color`, when every channel is a number in 0…1.
    public var accentColor: Color?
    /// `org.freedesktop.appearance contrast`: 0 or 1.
    public var contrast: UInt32?
    /// `org.freedesktop.appearance reduced-motion`: 0 or 1.
    public var reducedMotion: UInt32?
    /// `org.gnome.desktop.interface color-scheme`.
    public var gnomeColorScheme: String?
    /// `org.gnome.desktop.interface gtk-theme`.
    public var gtkTheme: String?
    /// `org.gnome.desktop.interface text-scaling-factor`, finite and positive.
    public var textScalingFactor: Double?
    /// `org.gnome.desktop.interface enable-animations`.
    public var enableAnimations: Bool?
    /// `org.gnome.desktop.interface font-name` ("Cantarell 11"); kept for apps, not applied.
    public var fontName: String?
    /// `org.gnome.desktop.a11y.interface high-contrast`.
    public var gnomeHighContrast: Bool?

    public init() {}

    /// The namespaces asked for.
    public static let namespaces = ["org.freedesktop.appearance", "org.gnome.desktop.interface", "org.gnome.desktop.a11y.interface"]

    /// Longest string kept (a theme or font name): a peer's megabyte of text is not.
    static let maximumStringLength = 256

    /// The appearance these settings give, falling back key by key: the portal's
    /// `org.freedesktop.appearance` value, then GNOME's, then the environment (`GTK_THEME` ending in
    /// `:dark` for dark, containing `HighContrast` for high contrast; `GDK_DPI_SCALE` for the text
    /// scale, brought into `Appearance.textScaleRange`), else the standard value (light,
    /// normal contrast, no accent, text scale 1, motion). `TESSERA_APPEARANCE` is not applied here.
    public func appearance(environment: [String: String]) -> Appearance {
        var result = Appearance.standard
        let gtkThemeVariable = environment["GTK_THEME"] ?? ""
        switch colorScheme {
        case 1: result.colorScheme = .dark
        case 2: result.colorScheme = .light
        default:
            if gnomeColorScheme == "prefer-dark" {
                result.colorScheme = .dark
            } else if gnomeColorScheme == "prefer-light" {
                result.colorScheme = .light
            } else if let gtkTheme, gtkTheme.lowercased().hasSuffix("-dark") {
                result.colorScheme = .dark
            } else if gtkThemeVariable.lowercased().hasSuffix(":dark") {
                result.colorScheme = .dark
            }
        }
        switch contrast {
        case 1: result.contrast = .high
        case 0: result.contrast = .normal
        default:
            if gnomeHighContrast == true || gtkThemeVariable.lowercased().contains("highcontrast")
                || (gtkTheme?.lowercased().contains("highcontrast") ?? false) {
                result.contrast = .high
            }
        }
        result.accentColor = accentColor
        if let textScalingFactor {
            result.textScale = textScalingFactor
        } else if let factor = environment["GDK_DPI_SCALE"].flatMap({ Double($0.trimmingWhitespace()) }),
                  factor.isFinite, factor > 0 {
            // GTK's text-only scale (fonts, not the window's density).
            result.textScale = factor
        }
        switch reducedMotion {
        case 1: result.reducedMotion = true
        case 0: result.reducedMotion = false
        default: if enableAnimations == false { result.reducedMotion = true }
        }
        return result
    }

    /// Takes one setting as the portal sends it (`value` unwrapped of its variant); false when the key
    /// is known and the value is not usable (dropped), true otherwise (kept, or a key not read).
    @discardableResult
    mutating func take(namespace: String, key: String, value: DBusValue) -> Bool {
        let value = Self.unwrapped(value)
        switch (namespace, key) {
        case ("org.freedesktop.appearance", "color-scheme"):
            guard let number = value.uint32Value ?? value.int32Value.flatMap(UInt32.init(exactly:)) else {
                colorScheme = nil; return false
            }
            // 0 is "no preference": the next source decides. An unknown number likewise.
            colorScheme = number == 1 || number == 2 ? number : nil
            return number <= 2
        case ("org.freedesktop.appearance", "accent-color"):
            accentColor = Self.color(value)
            return accentColor != nil
        case ("org.freedesktop.appearance", "contrast"):
            let number = value.uint32Value ?? value.int32Value.flatMap(UInt32.init(exactly:))
            contrast = number.flatMap { $0 <= 1 ? $0 : nil }
            return contrast != nil
        case ("org.freedesktop.appearance", "reduced-motion"):
            let number = value.uint32Value ?? value.int32Value.flatMap(UInt32.init(exactly:))
            reducedMotion = number.flatMap { $0 <= 1 ? $0 : nil }
            return reducedMotion != nil
        case ("org.gnome.desktop.interface", "color-scheme"):
            gnomeColorScheme = Self.string(value)
            return gnomeColorScheme != nil
        case ("org.gnome.desktop.interface", "gtk-theme"):
            gtkTheme = Self.string(value)
            return gtkTheme != nil
        case ("org.gnome.desktop.interface", "font-name"):
            fontName = Self.string(value)
            return fontName != nil
        case ("org.gnome.desktop.interface", "text-scaling-factor"):
            textScalingFactor = value.doubleValue.flatMap { $0.isFinite && $0 > 0 ? $0 : nil }
            return textScalingFactor != nil
        case ("org.gnome.desktop.interface", "enable-animations"):
            enableAnimations = value.booleanValue
            return enableAnimations != nil
        case ("org.gnome.desktop.a11y.interface", "high-contrast"):
            gnomeHighContrast = value.booleanValue
            return gnomeHighContrast != nil
        default:
            return true
        }
    }

    /// Takes `ReadAll`'s answer, `a{sa{sv}}`; false when it has another shape (nothing taken).
    mutating func takeAll(_ answer: DBusValue) -> (taken: Bool, rejected: [String]) {
        guard case .array(let signature, let namespaces) = answer, signature == "{sa{sv}}" else { return (false, []) }
        var rejected: [String] = []
        for entry in namespaces {
            guard case .dictEntry(.string(let namespace), .array(_, let keys)) = entry else { continue }
            for pair in keys {
                guard case .dictEntry(.string(let key), let value) = pair else { continue }
                if !take(namespace: namespace, key: key, value: value) { rejected.append("\(namespace) \(key)") }
            }
        }
        return (true, rejected)
    }

    /// A value out of its variants: version 1 of the portal's `Read` wraps the value in a second one.
    static func unwrapped(_ value: DBusValue) -> DBusValue {
        var value = value
        var depth = 0
        while case .variant(let inner) = value, depth < 4 {
            value = inner
            depth += 1
        }
        return value
    }

    static func string(_ value: DBusValue) -> String? {
        guard let text = value.stringValue, text.utf8.count <= maximumStringLength else { return nil }
        return text
    }

    /// `(ddd)` with each channel in 0…1 as an opaque colour; nil otherwise (the portal's way of saying
    /// "no accent" is a channel outside 0…1).
    static func color(_ value: DBusValue) -> Color? {
        guard case .structure(let fields) = value, fields.count == 3 else { return nil }
        let channels = fields.compactMap(\.doubleValue)
        guard channels.count == 3, channels.allSatisfy({ $0.isFinite && $0 >= 0 && $0 <= 1 }) else { return nil }
        func byte(_ channel: Double) -> UInt8 { UInt8((channel * 255).rounded()) }
        return Color(red: byte(channels[0]), green: byte(channels[1]), blue: byte(channels[2]))
    }
}
