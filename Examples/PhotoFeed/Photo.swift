import Foundation
import Tessera

/// A picture the feed can show, with the shape it is shown at.
/// - Thread: any (a value)
struct Photo: Sendable, Hashable {
    /// The image file.
    let path: String
    /// Height ÷ width, as `RatioSpec` takes it.
    let ratio: Double

    /// The photos that ship with the app, in the `Photos` folder of this target.
    static let names = ["chelsea.jpg", "coffee.jpg", "rocket.jpg", "clock.jpg", "brick.jpg"]

    /// SwiftPM's name for this target's resource bundle: the package's name, an underscore, the target's.
    static let bundleName = "Examples_PhotoFeed.resources"

    /// The folders that may hold the photos, in the order they are tried.
    ///
    /// SwiftPM copies the resource bundle beside each executable it builds with this target (the app,
    /// the test runner). Its generated `Bundle.module` is not used because it ends the process when the
    /// bundle is missing; a binary moved away from its bundle still finds the photos in the sources it
    /// was built from (`#filePath`), on the machine that built it.
    static func candidateFolders() -> [URL] {
        var executableFolders: [URL] = []
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            executableFolders.append(URL(fileURLWithPath: executable).deletingLastPathComponent())
        }
        executableFolders.append(Bundle.main.bundleURL.resolvingSymlinksInPath())
        let bundled = executableFolders.map { $0.appendingPathComponent(bundleName).appendingPathComponent("Photos") }
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Photos")
        return (bundled + [sources]).reduce(into: []) { folders, folder in
            if !folders.contains(where: { $0.path == folder.path }) { folders.append(folder) }
        }
    }

    /// The bundled photos, each with its aspect ratio read from the file's header. When no folder
    /// holds them, says where it looked; the posts then show an image node's error placeholder.
    static func bundled() -> [Photo] {
        let folders = candidateFolders()
        let found = folders.first { FileManager.default.fileExists(atPath: $0.appendingPathComponent(names[0]).path) }
        if found == nil {
            let looked = folders.map(\.path).joined(separator: ", ")
            FileHandle.standardError.write(Data("PhotoFeed: no photos found (looked in \(looked))\n".utf8))
        }
        return names.map { name in
            let path = (found ?? folders[0]).appendingPathComponent(name).path
            let pixels = try? ImageDecoder.naturalPixelSize(of: .file(path))
            return Photo(path: path, ratio: pixels.map { Double($0.height) / Double($0.width) } ?? 0.75)
        }
    }
}
