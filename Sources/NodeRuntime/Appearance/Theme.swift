public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// The name of a colour in a `Theme`: what a node asks for (`Node.themeColor(_:)`,
/// `Node.themedBackgroundColor`) instead of a fixed colour, so it follows light, dark and high
/// contrast. The standard names cover an ordinary screen; an app adds its own
/// (`ThemeColor("bubble.outgoing")`, or a string literal) and gives them a colour in each variant.
/// - Thread: any (a value)
public struct ThemeColor: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let name: String
    public init(_ name: String) { self.name = name }
    public init(stringLiteral name: String) { self.name = name }
    public var description: String { name }

    /// Behind a screen's content.
    public static let background = ThemeColor("background")
    /// Behind grouped content and between cards (a settings list, a chat's wallpaper).
    public static let secondaryBackground = ThemeColor("secondaryBackground")
    /// A field's or a pill's fill.
    public static let fill = ThemeColor("fill")
    /// Primary text.
    public static let label = ThemeColor("label")
    /// Secondary text: captions, times, details.
    public static let secondaryLabel = ThemeColor("secondaryLabel")
    /// Hairlines between rows.
    public static let separator = ThemeColor("separator")
    /// Links, selection, the main button; the desktop's accent colour when the theme follows it.
    public static let accent = ThemeColor("accent")
    /// Text and icons drawn on the accent colour.
    public static let onAccent = ThemeColor("onAccent")
    /// A bar's background (a tab bar, a toolbar).
    public static let bar = ThemeColor("bar")
    /// Text of an action that destroys something (an alert's "Delete" button).
    public static let destructive = ThemeColor("destructive")
}

/// One variant's colours: a colour for each name it knows.
/// - Thread: any (a value)
public struct ThemeColors: Hashable, Sendable {
    private var colors: [ThemeColor: Color]

    /// Colours by name.
    public init(_ colors: [ThemeColor: Color] = [:]) { self.colors = colors }

    /// The colour for `name`; nil when this variant does not name it.
    public subscript(_ name: ThemeColor) -> Color? {
        get { colors[name] }
        set { colors[name] = newValue }
    }

    /// The names this variant gives a colour.
    public var names: [ThemeColor] { colors.keys.sorted { $0.name < $1.name } }

    /// These colours with `other`'s added (`other` wins where both name a colour).
    public func merging(_ other: ThemeColors) -> ThemeColors {
        ThemeColors(colors.merging(other.colors) { _, new in new })
    }

    /// Tessera's light colours for the standard names.
    public static let standardLight = ThemeColors([
        .background: Color(rgb: 0xFFFFFF), .secondaryBackground: Color(rgb: 0xF1F3F5), .fill: Color(rgb: 0xF1F3F5),
        .label: Color(rgb: 0x111418), .secondaryLabel: Color(rgb: 0x7D8590), .separator: Color(rgb: 0xE3E6EA),
        .accent: Color(rgb: 0x3390EC), .onAccent: Color(rgb: 0xFFFFFF), .bar: Color(rgb: 0xF7F8FA),
        .destructive: Color(rgb: 0xD81B26),
    ])
    /// Tessera's dark colours for the standard names.
    public static let standardDark = ThemeColors([
        .background: Color(rgb: 0x17212B), .secondaryBackground: Color(rgb: 0x0E1621), .fill: Color(rgb: 0x242F3D),
        .label: Color(rgb: 0xF5F5F5), .secondaryLabel: Color(rgb: 0x8D9BA8), .separator: Color(rgb: 0x2B3A4A),
        .accent: Color(rgb: 0x5EB5F7), .onAccent: Color(rgb: 0xFFFFFF), .bar: Color(rgb: 0x1E2C3A),
        .destructive: Color(rgb: 0xFF7B63),
    ])
    /// Light with high contrast: black on white, stronger secondary text and lines.
    public static let standardHighContrastLight = ThemeColors([
        .background: Color(rgb: 0xFFFFFF), .secondaryBackground: Color(rgb: 0xE6E6E6), .fill: Color(rgb: 0xE6E6E6),
        .label: Color(rgb: 0x000000), .secondaryLabel: Color(rgb: 0x30363D), .separator: Color(rgb: 0x000000),
        .accent: Color(rgb: 0x0040A0), .onAccent: Color(rgb: 0xFFFFFF), .bar: Color(rgb: 0xFFFFFF),
        .destructive: Color(rgb: 0xA00010),
    ])
    /// Dark with high contrast: white on black.
    public static let standardHighContrastDark = ThemeColors([
        .background: Color(rgb: 0x000000), .secondaryBackground: Color(rgb: 0x1A1A1A), .fill: Color(rgb: 0x1F1F1F),
        .label: Color(rgb: 0xFFFFFF), .secondaryLabel: Color(rgb: 0xE0E0E0), .separator: Color(rgb: 0xFFFFFF),
        .accent: Color(rgb: 0x9CD3FF), .onAccent: Color(rgb: 0x000000), .bar: Color(rgb: 0x000000),
        .destructive: Color(rgb: 0xFF9C8F),
    ])
}

/// An app's colours in each appearance: light and dark, each with an optional high-contrast variant.
/// A name is looked up in the variant the appearance picks (high-contrast dark, say), then in its
/// colour scheme's (dark), then in light; a name none of them knows is `missingColor` (magenta, to be
/// seen). With `followsAccentColor`, the desktop's accent colour (`Appearance.accentColor`) is
/// `.accent`, and `.onAccent` is black or white, whichever reads better on it.
///
/// The runtime's theme is `Runtime.theme`; nodes resolve names through it and the current appearance.
/// - Thread: any (a value)
public struct Theme: Hashable, Sendable {
    public var light: ThemeColors
    public var dark: ThemeColors
    public var highContrastLight: ThemeColors?
    public var highContrastDark: ThemeColors?
    /// The desktop's accent colour replaces the theme's `.accent` (not in high contrast, whose accent
    /// is chosen to contrast).
    public var followsAccentColor: Bool

    /// The colour of a name no variant knows.
    public static let missingColor = Color(rgb: 0xFF00FF)

    public init(light: ThemeColors, dark: ThemeColors, highContrastLight: ThemeColors? = nil,
                highContrastDark: ThemeColors? = nil, followsAccentColor: Bool = true) {
        self.light = light
        self.dark = dark
        self.highContrastLight = highContrastLight
        self.highContrastDark = highContrastDark
        self.followsAccentColor = followsAccentColor
    }

    /// Tessera's standard colours, in all four variants.
    public static let standard = Theme(light: .standardLight, dark: .standardDark,
                                       highContrastLight: .standardHighContrastLight,
                                       highContrastDark: .standardHighContrastDark)

    /// This theme with colours added to (or replaced in) each variant: an app's own names.
    public func adding(light: ThemeColors = ThemeColors(), dark: ThemeColors = ThemeColors(),
                       highContrastLight: ThemeColors = ThemeColors(), highContrastDark: ThemeColors = ThemeColors()) -> Theme {
        Theme(light: self.light.merging(light), dark: self.dark.merging(dark),
              highContrastLight: (self.highContrastLight ?? ThemeColors()).merging(highContrastLight),
              highContrastDark: (self.highContrastDark ?? ThemeColors()).merging(highContrastDark),
              followsAccentColor: followsAccentColor)
    }

    /// The colour `name` has in `appearance`.
    public func color(_ name: ThemeColor, for appearance: Appearance) -> Color {
        let highContrast = appearance.contrast == .high
        if followsAccentColor, !highContrast, let accent = appearance.accentColor {
            if name == .accent { return accent }
            if name == .onAccent { return Self.readableColor(on: accent) }
        }
        let scheme = appearance.colorScheme == .dark ? dark : light
        if highContrast, let variant = appearance.colorScheme == .dark ? highContrastDark : highContrastLight,
           let color = variant[name] {
            return color
        }
        return scheme[name] ?? light[name] ?? Self.missingColor
    }

    /// Black or white, whichever contrasts more with `background` (WCAG relative luminance).
    public static func readableColor(on background: Color) -> Color {
        func linear(_ channel: UInt8) -> Double {
            let value = Double(channel) / 255
            return value <= 0.03928 ? value / 12.92 : Glibc.pow((value + 0.055) / 1.055, 2.4)
        }
        let luminance = 0.2126 * linear(background.red) + 0.7152 * linear(background.green) + 0.0722 * linear(background.blue)
        // Contrast with white: 1.05 / (L + 0.05); with black: (L + 0.05) / 0.05.
        return 1.05 / (luminance + 0.05) >= (luminance + 0.05) / 0.05 ? .white : .black
    }
}
