import Compositor
import Foundation
import TestSupport
import XCTest

/// The desktop's scale on X11, where the window system leaves it to the app: `Xft.dpi` loaded with
/// `xrdb` (what a desktop set to 150% does) opens the gallery at 1.5× — a window of 1.5 pixels per
/// point whose picture equals the gallery drawn headless at 1.5×, text and images at their pixel
/// size — and `GDK_SCALE` wins over it.
final class GalleryDesktopScaleTests: XCTestCase {
    private var galleryBinary: URL { GalleryProcess.galleryBinary }
    private var outputFolder: URL { GalleryProcess.outputFolder }

    func testXftDPIOpensTheWindowAtItsFractionalScaleAndDrawsItSharp() throws {
        guard let xrdb = Xvfb.which("xrdb") else { throw XCTSkip("xrdb is not installed (make test installs x11-xserver-utils)") }
        try FileManager.default.createDirectory(at: outputFolder, withIntermediateDirectories: true)
        let windowShot = outputFolder.appendingPathComponent("scale-xft-dpi-144-window.png").path
        let gdkShot = outputFolder.appendingPathComponent("scale-gdk-scale-2-window.png").path
        let headlessShot = outputFolder.appendingPathComponent("scale-1.5-headless.png").path
        let arguments = ["--screen", "chats", "--rows", "200", "--frames", "5", "--size", "800x600"]
            + GalleryProcess.assetsArguments
        let resources = outputFolder.appendingPathComponent("xft-dpi-144.Xresources")
        try Data("Xft.dpi:\t144\nXft.antialias: 1\n".utf8).write(to: resources)

        try Xvfb.withDisplay(numbers: 1100..<1200, screen: "1920x1200x24", keepsState: true) { display in
            let load = try GalleryProcess.run(xrdb, ["-nocpp", "-merge", resources.path], environment: ["DISPLAY": display])
            XCTAssertEqual(load.status, 0, "xrdb: " + load.output)
            let environment = ["DISPLAY": display, "SDL_VIDEODRIVER": "x11"]
            let (status, output) = try GalleryProcess.run(galleryBinary.path, arguments + ["--screenshot", windowShot],
                                                          environment: environment)
            XCTAssertEqual(status, 0, output)
            XCTAssertTrue(output.contains("video driver x11, 800×600 points at 1.5x (the desktop's: 1.5 from Xft.dpi 144)"),
                          "the window opens at the desktop's 1.5×: " + output)

            // GDK_SCALE names the desktop's scale too, and comes before Xft.dpi (as in GTK).
            var gdk = environment
            gdk["GDK_SCALE"] = "2"
            let (gdkStatus, gdkOutput) = try GalleryProcess.run(galleryBinary.path, arguments + ["--screenshot", gdkShot],
                                                                environment: gdk)
            XCTAssertEqual(gdkStatus, 0, gdkOutput)
            XCTAssertTrue(gdkOutput.contains("800×600 points at 2x (the desktop's: 2 from GDK_SCALE)"), gdkOutput)
        }

        let (headlessStatus, headlessOutput) = try GalleryProcess.run(
            galleryBinary.path, arguments + ["--headless", "--scale", "1.5", "--screenshot", headlessShot], environment: [:])
        XCTAssertEqual(headlessStatus, 0, headlessOutput)

        let window = try Bitmap(contentsOfFile: windowShot)
        let headless = try Bitmap(contentsOfFile: headlessShot)
        XCTAssertEqual(window.width, 1200, "800 points at 1.5 pixels each")
        XCTAssertEqual(window.height, 900)
        XCTAssertEqual(try Bitmap(contentsOfFile: gdkShot).width, 1600, "800 points at GDK_SCALE=2")
        XCTAssertGreaterThan(Set(window.pixels.prefix(200_000)).count, 200, "the window's frame is not blank")
        let (difference, diff) = GoldenImage.compare(window, headless, tolerance: 24)
        if difference.differingPixels > 0, let diff {
            try? diff.writePNG(to: outputFolder.appendingPathComponent("scale-1.5-diff.png").path)
        }
        // OpenGL and the software renderer filter and round slightly differently: allow a sliver. A
        // picture drawn at 1× and stretched to 1.5× (blurred text, images) differs nearly everywhere.
        XCTAssertLessThan(Double(difference.differingPixels) / Double(window.width * window.height), 0.01,
                          "\(difference.differingPixels) pixels differ (max delta \(difference.maximumChannelDelta))")
    }
}
