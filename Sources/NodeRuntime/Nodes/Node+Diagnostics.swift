import Compositor

/// What a node has reported about values it could not use as given, kept under the node's lock.
struct NodeDiagnostics {
    /// The properties already reported, so each is reported once per node.
    var reportedProperties: Set<String> = []
    /// The reports, oldest first.
    var list: [LayoutDiagnostic] = []
}

extension Node {
    /// What this node reported about values it could not use as given, oldest first, each once per
    /// node and property: a NaN opacity, a frame with an infinite side, a negative corner radius, a
    /// font size of 0 in its text, a list's negative row estimate, an image whose header cannot be read,
    /// text cut at `TextLayout.maximumLineCount` lines. Each kept the property's documented fallback,
    /// and each message says what was set and what was used. They are also printed through
    /// `TesseraLog.layout` (once per process for the same line), like layout diagnostics.
    /// - Thread: any
    public var diagnostics: [LayoutDiagnostic] { state.withLock { $0.diagnostics.list } }

    /// Reports a value of `property` that the node replaced by its fallback, once per node and
    /// property: the first report makes (and prints) the diagnostic, later ones cost a lock and a set
    /// lookup. Call with no lock held.
    func reportOnce(_ kind: LayoutDiagnostic.Kind, property: String, _ message: @autoclosure () -> String) {
        let isNew = state.withLock { $0.diagnostics.reportedProperties.insert(property).inserted }
        guard isNew else { return }
        // Made (and printed) outside the node's lock: naming the node takes it, printing takes the printer's.
        let diagnostic = LayoutDiagnostic(kind, LayoutDiagnostic.name(of: self), message())
        state.withLock { $0.diagnostics.list.append(diagnostic) }
    }

    /// Keeps a diagnostic made elsewhere (already printed) in `diagnostics`, once per node and
    /// `property`. Call with no lock held.
    func recordOnce(_ diagnostic: LayoutDiagnostic, property: String) {
        state.withLock { state in
            guard state.diagnostics.reportedProperties.insert(property).inserted else { return }
            state.diagnostics.list.append(diagnostic)
        }
    }
}
