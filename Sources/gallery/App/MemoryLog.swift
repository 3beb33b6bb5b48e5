import Tessera
import Foundation

/// `--memory-log FILE`: each SIGUSR1 the gallery receives appends one line of JSON to FILE — the
/// memory report of that moment, split by owner — so a long run (the soak) can say where memory went
/// between two points without a timer running in the app. Nothing is measured until a signal comes.
/// - Thread: main (`start`); the signal is heard on a dispatch queue and the report made on the UI thread.
@MainActor
final class MemoryLog {
    /// One line of the log.
    struct Entry: Codable {
        /// Seconds since the log started.
        var seconds: Double
        var rssBytes: Int
        var anonymousBytes: Int
        var threads: Int
        /// Each owner's bytes by key, as `--bench memory --json` writes them.
        var owners: [String: Int]
    }

    private let file: URL
    private let started = ContinuousClock.now
    private let measure: @MainActor () -> MemoryReport
    private var source: DispatchSourceSignal?

    init(file: URL, measure: @escaping @MainActor () -> MemoryReport) {
        self.file = file
        self.measure = measure
    }

    /// Empties the file and starts listening for SIGUSR1.
    func start() throws {
        try Data().write(to: file)
        signal(SIGUSR1, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global(qos: .utility))
        source.setEventHandler { [weak self] in
            Runtime.shared.mainQueue.enqueue { self?.append() }
        }
        source.resume()
        self.source = source
    }

    /// Measures now and appends the line.
    func append() {
        let report = measure()
        let entry = Entry(seconds: (ContinuousClock.now - started) / .seconds(1), rssBytes: report.rssBytes,
                          anonymousBytes: report.anonymousBytes, threads: report.threads, owners: report.bytesByOwner)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard var line = try? encoder.encode(entry), let handle = try? FileHandle(forWritingTo: file) else {
            GalleryApp.report("gallery: could not write the memory log to \(file.path)")
            return
        }
        line.append(0x0A)
        defer { try? handle.close() }
        _ = try? handle.seekToEnd()
        try? handle.write(contentsOf: line)
    }
}
