import FoundationEssentials
import Glibc
import Dispatch

/// A problem found while measuring: bad input that the layout engine replaced by a defined result.
///
/// Measuring never traps on bad input. Each problem becomes a diagnostic that travels with the result
/// (`Layout.diagnostics`, including those of every node measured for it), so a test or a debug overlay
/// can read exactly what went wrong, and is printed to standard error the first time it occurs in the
/// process.
/// - Thread: any (a value)
public struct LayoutDiagnostic: Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, and what the engine did instead.
    public enum Kind: String, Hashable, Sendable {
        /// A size range with a NaN or negative side, an infinite minimum, or a minimum above its maximum:
        /// NaN and negative values became 0, an infinite minimum 0, and the minimum was lowered.
        case invalidRange
        /// A style dimension that is NaN, negative or infinite: ignored (treated as auto).
        case invalidDimension
        /// A style minimum above its maximum: the minimum wins, as in CSS.
        case minimumExceedsMaximum
        /// A fraction of a parent without a bound on that axis: treated as auto.
        case unboundedFraction
        /// `calculateSizeThatFits` returned NaN, a negative or an infinite side: replaced by the range's
        /// minimum on that side.
        case invalidSize
        /// A spec parameter (spacing, insets, ratio, flex factor, offset, position) that is NaN or out of
        /// its domain: replaced by its neutral value (0, or 1 for a ratio, which is then ignored).
        case invalidParameter
        /// A node named twice in one spec: the first occurrence is laid out, later ones take no space.
        case duplicateNode
        /// A node whose measurement needs itself (its spec names itself or an ancestor that is being
        /// measured), or a spec that would make a node its own ancestor: the repeated node takes no space
        /// and is not added as a subnode.
        case cycle
        /// A spec placed a node that is not a subnode of the node that owns the spec, and that node does
        /// not manage its subnodes automatically: the frame is computed but not applied.
        case notASubnode
        /// A property set to NaN, or to a value outside its domain: a frame with a NaN, infinite or
        /// negative part, a corner radius that is NaN, negative or infinite, an opacity outside 0...1,
        /// a font size that is not a size, a list's row estimate that is negative or infinite. The
        /// property's documented fallback is used; the message says what was set and what was used.
        /// Reported once per node and property (see `Node.diagnostics`).
        case invalidProperty
        /// An image node whose layout gives it no size and whose image header cannot be read (a missing
        /// file, not an image, a directory): it has no natural size and measures as zero.
        case noNaturalSize
        /// Text longer than `TextLayout.maximumLineCount` lines: the layout keeps that many, and the
        /// last ends in the truncation token.
        case lineLimit
        /// An image node's picture could not be loaded (a missing file, a directory, a file that is
        /// not an image or is over the limits): the node draws its error placeholder. Reported once
        /// per node and source.
        case imageLoadFailed
        /// An image node's animation could not go on (a frame cut short or corrupt, a frame or canvas
        /// over the limits): the frame shown stays. Reported once per node and reason.
        case animationStopped
        /// A list, collection or scroll node on screen that can show nothing: no data source (never
        /// set, or let go: lists hold theirs weakly), or 0 points along the axis it scrolls (a
        /// scrolling node has no length of its own there). Reported once per node and cause.
        case showsNothing
    }

    public let kind: Kind
    /// The node or spec concerned, as "TypeName 'debugName'".
    public let subject: String
    /// A sentence saying what was wrong and what was done.
    public let message: String

    public init(_ kind: Kind, _ subject: String, _ message: String) {
        self.kind = kind
        self.subject = subject
        self.message = message
        LayoutDiagnosticPrinter.printOnce(self)
    }

    public var description: String { "\(subject): \(message) [\(kind.rawValue)]" }

    /// How a node is named in diagnostics.
    static func name(of node: Node) -> String {
        let type = String(describing: Swift.type(of: node))
        return node.debugName.map { "\(type) '\($0)'" } ?? type
    }
}

/// Prints each distinct diagnostic once per process, and at most `limit` of them, so that a bad cell in
/// a list of thousands cannot flood the log.
enum LayoutDiagnosticPrinter {
    static let limit = 200
    private static let printed = Locked(Set<String>())

    static func printOnce(_ diagnostic: LayoutDiagnostic) {
        let line = diagnostic.description
        let action = printed.withLock { printed -> Int in
            guard printed.count <= limit, !printed.contains(line) else { return 0 }
            printed.insert(line)
            return printed.count <= limit ? 1 : 2
        }
        switch action {
        case 1: TesseraLog.layout.warning("\(line)")
        case 2: TesseraLog.layout.warning("further layout diagnostics are not reported")
        default: break
        }
    }
}
