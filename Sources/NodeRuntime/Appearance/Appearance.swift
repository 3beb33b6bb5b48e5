public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// How the user wants apps to look and move: light or dark, normal or high contrast, an accent colour,
/// a text scale and whether things should move by themselves. The desktop says it (the XDG settings
/// portal, read by `SettingsPortal` in an `Application`), the environment can override it
/// (`AppearanceOverride`, `TESSERA_APPEARANCE`), and the runtime hands it to the nodes that depend on
/// it (`Runtime.appearance`, `Node.appearanceDidChange(_:)`).
///
/// Every value is usable: a text scale that is not a finite number in `textScaleRange` is brought
/// into it (NaN and infinities to 1).
/// - Thread: any (a value)
public struct Appearance: Hashable, Sendable, CustomStringConvertible {
    /// Light or dark colours.
    /// - Thread: any (a value)
    public enum ColorScheme: String, Hashable, Sendable, CaseIterable {
        case light, dark
    }

    /// The contrast between text and what is behind it.
    /// - Thread: any (a value)
    public enum Contrast: String, Hashable, Sendable, CaseIterable {
        case normal, high
    }

    /// Light or dark colours; light by default.
    public var colorScheme: ColorScheme
    /// Normal or high contrast; normal by default.
    public var contrast: Contrast
    /// The accent colour the user chose for the desktop (opaque); nil: none, the theme's own.
    public var accentColor: Color?
    /// How much larger than its own size text is drawn (1: as given). Set values are kept in
    /// `textScaleRange`; NaN and infinities become 1.
    public var textScale: Double {
        get { storedTextScale }
        set { storedTextScale = Self.sanitizedTextScale(newValue) }
    }
    /// True: things that move by themselves (layout transitions, slides, glides, animated images) do
    /// not, or as little as they can.
    public var reducedMotion: Bool

    private var storedTextScale: Double

    /// An appearance; each value defaults to the standard one.
    /// - Thread: any
    public init(colorScheme: ColorScheme = .light, contrast: Contrast = .normal, accentColor: Color? = nil,
                textScale: Double = 1, reducedMotion: Bool = false) {
        self.colorScheme = colorScheme
        self.contrast = contrast
        self.accentColor = accentColor
        self.storedTextScale = Self.sanitizedTextScale(textScale)
        self.reducedMotion = reducedMotion
    }

    /// Light, normal contrast, no accent, text at its size, motion allowed: what an app shows when
    /// nothing says otherwise.
    public static let standard = Appearance()

    /// The text scales kept: half to three times the given size.
    public static let textScaleRange: ClosedRange<Double> = 0.5...3

    /// `scale` brought into `textScaleRange`; NaN and infinities become 1.
    public static func sanitizedTextScale(_ scale: Double) -> Double {
        guard scale.isFinite else { return 1 }
        return min(max(scale, textScaleRange.lowerBound), textScaleRange.upperBound)
    }

    /// True for the dark colour scheme.
    public var isDark: Bool { colorScheme == .dark }
    /// True for high contrast.
    public var isHighContrast: Bool { contrast == .high }

    public var description: String {
        var parts = [colorScheme.rawValue]
        if contrast == .high { parts.append("high-contrast") }
        if let accentColor { parts.append("accent=\(accentColor)") }
        if textScale != 1 { parts.append("text-scale=\(textScale)") }
        if reducedMotion { parts.append("reduced-motion") }
        return parts.joined(separator: ",")
    }

    /// What differs between `self` and `other`.
    public func changes(from other: Appearance) -> AppearanceChange {
        var change: AppearanceChange = []
        if colorScheme != other.colorScheme || contrast != other.contrast || accentColor != other.accentColor {
            change.insert(.colors)
        }
        if textScale != other.textScale { change.insert(.textScale) }
        if reducedMotion != other.reducedMotion { change.insert(.motion) }
        return change
    }
}

/// What part of the appearance changed, or what part a node depends on.
/// - Thread: any (a value)
public struct AppearanceChange: OptionSet, Hashable, Sendable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The colour scheme, the contrast, the accent colour, or the app's theme.
    public static let colors = AppearanceChange(rawValue: 1 << 0)
    /// The text scale: text is measured again.
    public static let textScale = AppearanceChange(rawValue: 1 << 1)
    /// Reduced motion turned on or off.
    public static let motion = AppearanceChange(rawValue: 1 << 2)
    public static let all: AppearanceChange = [.colors, .textScale, .motion]
}

/// Values that replace what the desktop says, from the environment variable
/// `TESSERA_APPEARANCE`: a comma-separated list of
/// `light`, `dark`, `high-contrast` (or `contrast=high`), `normal-contrast` (`contrast=normal`),
/// `reduced-motion`, `full-motion`, `text-scale=1.5` and `accent=#RRGGBB`, e.g.
/// `TESSERA_APPEARANCE=dark,high-contrast,text-scale=1.5,reduced-motion`. Only what the list names is
/// replaced: `text-scale=1.5` keeps the desktop's dark or light. Words it does not know are reported
/// (`TesseraLog.app`) and ignored.
/// - Thread: any (a value)
public struct AppearanceOverride: Hashable, Sendable {
    public var colorScheme: Appearance.ColorScheme?
    public var contrast: Appearance.Contrast?
    public var accentColor: Color?
    public var textScale: Double?
    public var reducedMotion: Bool?

    /// The environment variable read by `fromEnvironment`.
    public static let environmentVariable = "TESSERA_APPEARANCE"

    public init(colorScheme: Appearance.ColorScheme? = nil, contrast: Appearance.Contrast? = nil, accentColor: Color? = nil,
                textScale: Double? = nil, reducedMotion: Bool? = nil) {
        self.colorScheme = colorScheme
        self.contrast = contrast
        self.accentColor = accentColor
        self.textScale = textScale
        self.reducedMotion = reducedMotion
    }

    /// The override `text` describes, and the words in it that mean nothing (ignored).
    public static func parse(_ text: String) -> (override: AppearanceOverride, unknown: [String]) {
        var result = AppearanceOverride()
        var unknown: [String] = []
        for raw in text.split(separator: ",") {
            let word = raw.trimmingWhitespace().lowercased()
            guard !word.isEmpty else { continue }
            let pair = word.split(separator: "=", maxSplits: 1).map(String.init)
            switch (pair[0], pair.count == 2 ? pair[1] : nil) {
            case ("light", nil), ("color-scheme", "light"): result.colorScheme = .light
            case ("dark", nil), ("color-scheme", "dark"): result.colorScheme = .dark
            case ("high-contrast", nil), ("contrast", "high"): result.contrast = .high
            case ("normal-contrast", nil), ("contrast", "normal"): result.contrast = .normal
            case ("reduced-motion", nil), ("motion", "reduced"): result.reducedMotion = true
            case ("full-motion", nil), ("motion", "full"): result.reducedMotion = false
            case ("text-scale", let value?):
                if let scale = Double(value), scale.isFinite, scale > 0 {
                    result.textScale = Appearance.sanitizedTextScale(scale)
                } else {
                    unknown.append(word)
                }
            case ("accent", let value?):
                if let color = Self.parseHexColor(value) { result.accentColor = color } else { unknown.append(word) }
            default:
                unknown.append(word)
            }
        }
        return (result, unknown)
    }

    /// The override the environment's `TESSERA_APPEARANCE` sets; nil when it is unset or empty.
    /// Words it does not know are reported once (`TesseraLog.app`).
    /// (nil: the process's environment).
    public static func fromEnvironment(_ environment: [String: String]? = nil) -> AppearanceOverride? {
        let environment = environment ?? ProcessInfo.processInfo.environment
        guard let text = environment[environmentVariable], !text.isEmpty else { return nil }
        let (override, unknown) = parse(text)
        if !unknown.isEmpty {
            TesseraLog.app.warning("\(environmentVariable)=\(text): ignored \(unknown.joined(separator: ", ")) (known: light, dark, high-contrast, normal-contrast, reduced-motion, full-motion, text-scale=N, accent=#RRGGBB)")
        }
        return override
    }

    /// True when it replaces nothing.
    public var isEmpty: Bool { self == AppearanceOverride() }

    /// `appearance` with what this override names replaced.
    public func applied(to appearance: Appearance) -> Appearance {
        var result = appearance
        if let colorScheme { result.colorScheme = colorScheme }
        if let contrast { result.contrast = contrast }
        if let accentColor { result.accentColor = accentColor }
        if let textScale { result.textScale = textScale }
        if let reducedMotion { result.reducedMotion = reducedMotion }
        return result
    }

    /// `#RRGGBB` or `RRGGBB`.
    static func parseHexColor(_ text: String) -> Color? {
        let digits = text.hasPrefix("#") ? String(text.dropFirst()) : text
        guard digits.count == 6, let value = UInt32(digits, radix: 16) else { return nil }
        return Color(rgb: value)
    }
}
