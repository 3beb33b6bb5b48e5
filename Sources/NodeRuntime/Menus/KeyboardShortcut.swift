public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// A key with the modifiers held for it, as a menu item shows it ("Ctrl+Shift+N") and the host
/// matches it against the keys nobody else took (`NodeHost.route`, through the menus it knows).
///
/// ```swift
/// let save = KeyboardShortcut(.character("s"), .control)
/// let reopen = KeyboardShortcut("Ctrl+Shift+T")   // parsed; nil when it names no key
/// save.displayString  // "Ctrl+S"
/// ```
///
/// Letters are stored lowercase and match either case: Shift is a modifier of its own, so
/// "Ctrl+Shift+N" is `.character("n")` with `[.control, .shift]`, whatever SDL reports for the
/// letter.
/// - Thread: any (a value)
public struct KeyboardShortcut: Hashable, Sendable, CustomStringConvertible {
    /// The key pressed. - Thread: any
    public var key: Key
    /// The modifiers that must be held, exactly: a shortcut without Shift does not fire with it.
    /// - Thread: any
    public var modifiers: KeyModifiers

    /// A shortcut for `key` with `modifiers`. A letter is kept lowercase. - Thread: any
    public init(_ key: Key, _ modifiers: KeyModifiers = []) {
        self.key = Self.normalized(key)
        self.modifiers = modifiers
    }

    /// Parses a shortcut written as its display string: modifiers and a key joined by `+`, in any
    /// case and order ("Ctrl+Shift+N", "alt+f4", "Shift+F10", "Ctrl++"). Modifier names: Ctrl or
    /// Control, Alt or Option, Shift, Super, Meta, Cmd or Command. Key names: a single character, F1
    /// to F35, Enter (Return), Esc (Escape), Space, Tab, Backspace, Del (Delete), Up, Down, Left,
    /// Right, PgUp (PageUp), PgDown (PageDown), Home, End, Menu. Nil when a part names nothing, or
    /// there is no key. - Thread: any
    public init?(_ string: String) {
        var parts: [Substring] = []
        var rest = Substring(string.trimmingWhitespace())
        // "+" is a key of its own: a trailing "++" (or a lone "+") ends in it.
        while !rest.isEmpty {
            if rest == "+" { parts.append(rest); break }
            if let plus = rest.dropFirst().firstIndex(of: "+") {
                parts.append(rest[..<plus])
                rest = rest[rest.index(after: plus)...]
            } else {
                parts.append(rest)
                break
            }
        }
        guard let keyName = parts.popLast() else { return nil }
        var modifiers: KeyModifiers = []
        for part in parts {
            switch part.trimmingWhitespace().lowercased() {
            case "ctrl", "control": modifiers.insert(.control)
            case "alt", "option": modifiers.insert(.alt)
            case "shift": modifiers.insert(.shift)
            case "super", "meta", "cmd", "command": modifiers.insert(.command)
            default: return nil
            }
        }
        guard let key = Self.key(named: String(keyName)) else { return nil }
        self.init(key, modifiers)
    }

    /// SDL's key code of the Menu (Application) key, `SDLK_APPLICATION`: `Key.other(menuKeyCode)`.
    /// - Thread: any
    public static let menuKeyCode: Int32 = 0x4000_0065

    /// The shortcut as a menu shows it: modifiers in the order Ctrl, Alt, Shift, Super, then the key,
    /// joined by `+` ("Ctrl+Shift+N", "F5", "Alt+Enter"). Parsing it gives the shortcut back.
    /// - Thread: any
    public var displayString: String {
        var parts: [String] = []
        if modifiers.contains(.control) { parts.append("Ctrl") }
        if modifiers.contains(.alt) { parts.append("Alt") }
        if modifiers.contains(.shift) { parts.append("Shift") }
        if modifiers.contains(.command) { parts.append("Super") }
        parts.append(Self.name(of: key))
        return parts.joined(separator: "+")
    }

    /// The display string. - Thread: any
    public var description: String { displayString }

    /// Whether a key press is this shortcut: the same key (a letter in either case) and exactly
    /// these modifiers. - Thread: any
    public func matches(_ key: Key, modifiers: KeyModifiers) -> Bool {
        Self.normalized(key) == self.key && modifiers == self.modifiers
    }

    private static func normalized(_ key: Key) -> Key {
        if case .character(let character) = key {
            let lower = character.lowercased()
            if lower.count == 1, let first = lower.first { return .character(first) }
        }
        return key
    }

    private static func name(of key: Key) -> String {
        switch key {
        case .escape: return "Esc"
        case .enter: return "Enter"
        case .space: return "Space"
        case .tab: return "Tab"
        case .backspace: return "Backspace"
        case .delete: return "Del"
        case .up: return "Up"
        case .down: return "Down"
        case .left: return "Left"
        case .right: return "Right"
        case .pageUp: return "PgUp"
        case .pageDown: return "PgDown"
        case .home: return "Home"
        case .end: return "End"
        case .function(let number): return "F\(number)"
        case .character(let character): return character.uppercased()
        case .other(let code): return code == menuKeyCode ? "Menu" : "Key \(code)"
        }
    }

    private static func key(named raw: String) -> Key? {
        let name = raw.trimmingWhitespace().isEmpty ? raw : raw.trimmingWhitespace()
        if name.count == 1, let character = name.first { return .character(character) }
        let lower = name.lowercased()
        if lower.hasPrefix("f"), let number = Int(lower.dropFirst()), (1...35).contains(number) { return .function(number) }
        switch lower {
        case "esc", "escape": return .escape
        case "enter", "return": return .enter
        case "space": return .space
        case "tab": return .tab
        case "backspace": return .backspace
        case "del", "delete": return .delete
        case "up": return .up
        case "down": return .down
        case "left": return .left
        case "right": return .right
        case "pgup", "pageup": return .pageUp
        case "pgdown", "pgdn", "pagedown": return .pageDown
        case "home": return .home
        case "end": return .end
        case "menu": return .other(menuKeyCode)
        default: return nil
        }
    }
}
