public import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// The runtime's appearance and theme, under the runtime's lock.
struct AppearanceState: Sendable {
    var appearance = Appearance.standard
    var theme = Theme.standard
    /// Changes applied so far (appearance or theme).
    var generation = 0
}

extension Runtime {
    /// The appearance nodes follow now: `Appearance.standard` until an app (an `Application` reading the
    /// desktop's settings) or a test sets another with `setAppearance(_:)`. Reading it from a node does
    /// not make the node follow it; `Node.themeColor(_:)`, `Node.themedBackgroundColor` and
    /// `Node.dependOnAppearance(_:)` do. - Thread: any
    public var appearance: Appearance { appearanceState.withLock { $0.appearance } }

    /// The colours nodes resolve names in (`Node.themeColor(_:)`); `Theme.standard` by default.
    /// - Thread: any
    public var theme: Theme { appearanceState.withLock { $0.theme } }

    /// Counts changes of the appearance or the theme applied so far. - Thread: any
    public var appearanceGeneration: Int { appearanceState.withLock { $0.generation } }

    /// The colour `name` has in the current theme and appearance (nothing is recorded: a node that
    /// must follow changes asks `Node.themeColor(_:)`). - Thread: any
    public func resolveColor(_ name: ThemeColor) -> Color {
        let (theme, appearance) = appearanceState.withLock { ($0.theme, $0.appearance) }
        return theme.color(name, for: appearance)
    }

    /// Makes `appearance` the current one and tells the nodes that depend on what changed
    /// (`Node.appearanceDidChange(_:)`), which draw or measure again; the others are left alone.
    /// Returns what changed (empty: nothing, and no node is told).
    /// - Thread: main
    @MainActor @discardableResult
    public func setAppearance(_ appearance: Appearance) -> AppearanceChange {
        UIThread.precondition("Runtime.setAppearance")
        let change = appearanceState.withLock { state -> AppearanceChange in
            let change = appearance.changes(from: state.appearance)
            state.appearance = appearance
            if !change.isEmpty { state.generation += 1 }
            return change
        }
        animator.reducesMotion = appearance.reducedMotion
        notifyAppearanceDependents(change)
        return change
    }

    /// Makes `theme` the one nodes resolve colours in; the nodes that depend on colours draw again.
    /// - Thread: main
    @MainActor
    public func setTheme(_ theme: Theme) {
        UIThread.precondition("Runtime.setTheme")
        let changed = appearanceState.withLock { state -> Bool in
            guard state.theme != theme else { return false }
            state.theme = theme
            state.generation += 1
            return true
        }
        if changed { notifyAppearanceDependents(.colors) }
    }

    @MainActor
    private func notifyAppearanceDependents(_ change: AppearanceChange) {
        guard !change.isEmpty else { return }
        // Taken under the registry's lock, told after it: a node's hook sets properties (locks of its own).
        for (node, aspects) in appearanceDependents.dependents(on: change) {
            node.appearanceDidChange(aspects.intersection(change))
        }
        // A host at rest runs the frame that shows the change.
        UIWakeup.shared.wake()
    }

    /// The number of nodes that depend on some part of the appearance (nodes gone are not counted).
    /// - Thread: any
    public var appearanceDependentCount: Int { appearanceDependents.liveCount }
}

/// The nodes that depend on the appearance, held weakly, with what each depends on and the theme
/// colour of its background when it has one.
/// - Thread: any
final class AppearanceDependents: Sendable {
    struct Entry {
        weak var node: Node?
        var aspects: AppearanceChange
        var background: ThemeColor?
    }

    private struct Registry {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// The count after the last sweep of entries whose node is gone.
        var sweptCount = 0
    }

    private let registry = Locked(Registry())

    /// Records that `node` depends on `aspects` (added to what it depended on).
    func add(_ node: Node, aspects: AppearanceChange) {
        let id = ObjectIdentifier(node)
        let loaded = registry.withLock { registry -> [Node] in
            if var entry = registry.entries[id], entry.node === node {
                guard !entry.aspects.isSuperset(of: aspects) else { return [] }
                entry.aspects.formUnion(aspects)
                registry.entries[id] = entry
                return []
            }
            registry.entries[id] = Entry(node: node, aspects: aspects, background: nil)
            return Self.sweepIfGrown(&registry)
        }
        // The nodes the sweep looked at are let go here, after unlocking: a node's `deinit` takes
        // locks of its own.
        withExtendedLifetime(loaded) {}
    }

    /// Sets (or clears, nil) the theme colour of `node`'s background; a node with one depends on colours.
    func setBackground(_ name: ThemeColor?, of node: Node) {
        let id = ObjectIdentifier(node)
        let loaded = registry.withLock { registry -> [Node] in
            if var entry = registry.entries[id], entry.node === node {
                entry.background = name
                if name != nil { entry.aspects.insert(.colors) }
                registry.entries[id] = entry
            } else if let name {
                registry.entries[id] = Entry(node: node, aspects: .colors, background: name)
                return Self.sweepIfGrown(&registry)
            }
            return []
        }
        withExtendedLifetime(loaded) {}
    }

    func background(of node: Node) -> ThemeColor? {
        registry.withLock { registry in
            guard let entry = registry.entries[ObjectIdentifier(node)], entry.node === node else { return nil }
            return entry.background
        }
    }

    func aspects(of node: Node) -> AppearanceChange {
        registry.withLock { registry in
            guard let entry = registry.entries[ObjectIdentifier(node)], entry.node === node else { return [] }
            return entry.aspects
        }
    }

    /// The live nodes depending on some part of `change`, with all they depend on.
    func dependents(on change: AppearanceChange) -> [(Node, AppearanceChange)] {
        let (found, loaded) = registry.withLock { registry -> ([(Node, AppearanceChange)], [Node]) in
            var found: [(Node, AppearanceChange)] = []
            // Every node loaded from a weak reference is kept to here and let go after unlocking.
            var loaded: [Node] = []
            var gone: [ObjectIdentifier] = []
            for (id, entry) in registry.entries {
                guard let node = entry.node else { gone.append(id); continue }
                loaded.append(node)
                if !entry.aspects.isDisjoint(with: change) { found.append((node, entry.aspects)) }
            }
            for id in gone { registry.entries[id] = nil }
            registry.sweptCount = registry.entries.count
            return (found, loaded)
        }
        withExtendedLifetime(loaded) {}
        return found
    }

    var liveCount: Int {
        let loaded = registry.withLock { $0.entries.values.compactMap(\.node) }
        return loaded.count
    }

    /// Drops the entries of nodes that are gone once the registry has doubled since the last sweep, so
    /// its size follows the nodes alive rather than every node ever made. Returns the nodes it loaded
    /// from their weak references, for the caller to let go after unlocking.
    private static func sweepIfGrown(_ registry: inout Registry) -> [Node] {
        guard registry.entries.count > 2 * registry.sweptCount + 64 else { return [] }
        var loaded: [Node] = []
        registry.entries = registry.entries.filter { entry in
            guard let node = entry.value.node else { return false }
            loaded.append(node)
            return true
        }
        registry.sweptCount = registry.entries.count
        return loaded
    }
}
