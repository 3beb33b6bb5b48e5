/// Work the decoders have done since the process started, in the units that cost time whatever the
/// file's size: scans libjpeg began to decode, GIF frame pixels giflib decompressed, APNG chunks
/// walked. Tests bound what a hostile file costs by these counts rather than by a clock; nothing
/// else reads them.
/// - Thread: any
enum DecodeWork {
    /// The counts, each a running total.
    /// - Thread: any (a value)
    struct Counts: Sendable, Equatable {
        /// Scans libjpeg started (its `input_scan_number` when a decode ends): each is a pass over
        /// every block of the components it holds, however few bytes it takes.
        var jpegScans = 0
        /// Pixels of animated GIF frames giflib decompressed (rows times the frame's width).
        var gifFramePixels = 0
        /// APNG chunks read to find and stream frames (headers read, not bytes).
        var apngChunks = 0
    }

    private static let counts = Locked(Counts())

    /// The totals now.
    static var now: Counts { counts.withLock { $0 } }

    /// Adds `amount` to one count.
    static func add(_ count: WritableKeyPath<Counts, Int>, _ amount: Int) {
        guard amount != 0 else { return }
        counts.withLock { $0[keyPath: count] += amount }
    }
}
