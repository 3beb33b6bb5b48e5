import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// Where a node stands relative to the screen. Each state includes the work of those before it: a node
/// comes near as measure layout → preload → display → visible, and leaves in the reverse order.
/// - Thread: any
public struct InterfaceState: OptionSet, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Far ahead: its layout is measured in the background.
    public static let measureLayout = InterfaceState(rawValue: 1 << 0)
    /// Closer: data is fetched and images decoded (`didEnterPreloadState`).
    public static let preload = InterfaceState(rawValue: 1 << 1)
    /// About to show: the layer is loaded and the contents drawn (`didEnterDisplayState`).
    public static let display = InterfaceState(rawValue: 1 << 2)
    /// On screen (`didEnterVisibleState`).
    public static let visible = InterfaceState(rawValue: 1 << 3)
    /// All four: what a node on screen has.
    public static let onScreen: InterfaceState = [.measureLayout, .preload, .display, .visible]

    public var description: String {
        var names: [String] = []
        if contains(.measureLayout) { names.append("measureLayout") }
        if contains(.preload) { names.append("preload") }
        if contains(.display) { names.append("display") }
        if contains(.visible) { names.append("visible") }
        return "[" + names.joined(separator: ", ") + "]"
    }
}

extension Node {
    /// The node's interface state. - Thread: any (reading)
    public var interfaceState: InterfaceState { state.withLock { $0.interfaceState } }

    /// Moves this node and its subtree to `newState`, calling the exit hooks (visible, display, preload)
    /// and then the enter hooks (preload, display, visible) in that order, then
    /// `interfaceStateDidChange` once. Entering display loads the layer (with `didLoad`) and starts a
    /// draw; leaving it bumps the sentinel and clears the contents.
    /// - Thread: main
    @MainActor
    public func setInterfaceState(_ newState: InterfaceState) {
        UIThread.precondition("Node.setInterfaceState")
        let (old, job) = state.withLock { state -> (InterfaceState, DisplayJob?) in
            let old = state.interfaceState
            state.interfaceState = newState
            // An urgent draw keeps its place while the node stays visible.
            let keepsUrgency = state.display.inFlight?.isUrgent == true && newState.contains(.visible)
            return (old, keepsUrgency ? nil : state.display.inFlight?.job)
        }
        if old != newState {
            job?.setPriority(displayPriority)
            let entering = newState.subtracting(old), leaving = old.subtracting(newState)
            if leaving.contains(.visible) { didExitVisibleState() }
            if leaving.contains(.display) {
                cancelDisplay()
                didExitDisplayState()
                clearContents()
            }
            if leaving.contains(.preload) { didExitPreloadState() }
            if entering.contains(.preload) { didEnterPreloadState() }
            if entering.contains(.display) {
                if !isRasterizedByAncestor { _ = layer }
                didEnterDisplayState()
                if drawsContents { setNeedsDisplay() }
            }
            if entering.contains(.visible) { didEnterVisibleState() }
            interfaceStateDidChange(newState, from: old)
            if let participant = self as? FrameParticipant { updateFrameParticipation(participant, active: !newState.isEmpty) }
        }
        for subnode in subnodes { subnode.setInterfaceState(newState) }
    }

    /// A node that takes part in frames (a list) joins its host's frames while it has any interface
    /// state, and leaves them when it has none: nothing registers it by hand.
    @MainActor
    private func updateFrameParticipation(_ participant: FrameParticipant, active: Bool) {
        if active {
            guard let host = nodeHost else { return }
            if let previous = frameHost, previous !== host { previous.removeFrameParticipant(participant) }
            frameHost = host
            host.addFrameParticipant(participant)
        } else {
            frameHost?.removeFrameParticipant(participant)
            frameHost = nil
        }
    }

    /// Has the frame participants in this subtree that have an interface state join the frames of the
    /// host they are now shown in: for a subtree that took its states before it joined a hosted tree
    /// (a container moves a controller's node in after presenting it).
    @MainActor
    func joinHostFramesInSubtree() {
        guard let host = nodeHost else { return }
        for node in subtree() {
            guard let participant = node as? FrameParticipant, !node.interfaceState.isEmpty,
                  node.frameHost !== host else { continue }
            node.updateFrameParticipation(participant, active: true)
        }
    }

    /// The host showing this node: the one whose root is at the top of its event chain (supernodes,
    /// and from a list's row to the list); nil for a node in no host's tree. - Thread: main
    @MainActor
    public var nodeHost: NodeHost? {
        var node = self
        while let parent = node.eventSupernode { node = parent }
        return node.rootHost
    }

    /// Moves the subtree into the states it gains on its way to `target` one step at a time, so every
    /// node sees preload, then display, then visible, as the lifecycle promises; `between` runs after
    /// display and before visible (the host applies layout there).
    /// - Thread: main
    @MainActor
    public func enterInterfaceState(_ target: InterfaceState, between: () -> Void = {}) {
        var current = interfaceState
        for step in [InterfaceState.measureLayout, .preload, .display] where target.contains(step) && !current.contains(step) {
            current.insert(step)
            setInterfaceState(current)
        }
        between()
        if target.contains(.visible) && !current.contains(.visible) {
            current.insert(.visible)
            setInterfaceState(current)
        }
    }
}

