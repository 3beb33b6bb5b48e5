import Tessera
import Foundation

/// Where the gallery's memory is at rest: the screen asked for (`--screen`, the chat list by
/// default) is shown, settled and left alone for `seconds` (the event loop running, so work put off
/// to idle time is done), then `MemoryReport` splits the process's resident memory by owner.
/// - Thread: main
@MainActor
struct MemoryBenchmark {
    /// The JSON report (`--json`): `rssBytes`, `anonymousBytes`, and each owner's bytes by key.
    struct Report: Codable {
        var benchmark = "memory"
        /// "renderer software, video driver x11", or the dummy driver's.
        var output: String
        var screen: String
        var rssBytes: Int
        var anonymousBytes: Int
        var fileBytes: Int
        var sharedMemoryBytes: Int
        var threads: Int
        var mapsOpenGL: Bool
        /// libcurl is mapped (something was fetched by URL).
        var mapsNetworkLibraries: Bool
        /// Each owner's bytes by key ("bitmapsOnScreen", "threadStacks", "fontFiles", …).
        var owners: [String: Int]
        /// The same owners with their names, kinds and how each was counted.
        var details: [MemoryReport.Owner]
        var largestFiles: [MemoryReport.Owner]
    }

    let assets: URL
    let screen: GalleryOptions.Screen
    let seconds: Double
    var output = BenchmarkOutput()

    func run() throws -> (table: String, report: Report) {
        let app = try GalleryApp.make(options: output.galleryOptions(screen: screen), assets: assets)
        let application = app.application
        defer {
            app.host.setRootController(nil)
            application.close()
        }
        _ = try application.settle(timeout: 30)
        application.runEventLoop(forSeconds: seconds)
        _ = try application.settle(timeout: 30)
        let memory = MemoryReport.measure(windows: application.windows, appData: ["chatDataset": app.data.estimatedBytes])
        let described = BenchmarkOutput.describe(application.renderer)
        let report = Report(output: described, screen: screen.rawValue, rssBytes: memory.rssBytes,
                            anonymousBytes: memory.anonymousBytes, fileBytes: memory.fileBytes,
                            sharedMemoryBytes: memory.sharedMemoryBytes, threads: memory.threads,
                            mapsOpenGL: memory.mapsOpenGL, mapsNetworkLibraries: memory.mapsNetworkLibraries, owners: memory.bytesByOwner, details: memory.owners,
                            largestFiles: memory.largestFiles)
        let table = "memory benchmark (\(described)): the \(screen.rawValue) screen at rest after \(seconds) s\n"
            + memory.table.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")
        return (table, report)
    }
}

extension ChatData {
    /// What the dataset holds, roughly: its strings' bytes and each value's own size (what the app
    /// reports as its own data in `--bench memory`).
    var estimatedBytes: Int {
        func string(_ text: String) -> Int { text.utf8.count > 15 ? text.utf8.count + 32 : 0 }
        var total = chats.count * MemoryLayout<Chat>.stride
        for chat in chats {
            total += string(chat.title) + string(chat.locale) + (chat.avatar.map(string) ?? 0)
            total += chat.messages.count * MemoryLayout<Message>.stride
            for message in chat.messages {
                total += string(message.author) + string(message.text) + string(message.time) + (message.photo.map(string) ?? 0)
            }
        }
        return total
    }
}
