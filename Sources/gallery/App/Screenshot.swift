import Tessera
import Foundation

extension Compositor {
    /// Composites `layer` offscreen and writes the frame as a PNG at `path`, making its folder.
    /// - Returns: the file written.
    /// - Throws: `GalleryError` when the frame cannot be read back; the file system's error when the
    ///   PNG cannot be written.
    /// - Thread: main
    @MainActor
    func writeScreenshot(of layer: Layer, to path: String) throws -> URL {
        guard let pixels = capture(layer) else { throw GalleryError("could not read the frame back") }
        let url = URL(fileURLWithPath: path)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try pixels.writePNG(to: url.path)
        return url
    }
}
