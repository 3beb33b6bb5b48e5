import Tessera
import Foundation

/// The compositor showcase: photo cards in each corner-rounding mode and radius, and one layer that
/// moves every frame (its contents are uploaded once; only its frame changes).
/// - Thread: main
@MainActor
final class ShowcaseApp {
    let assets: URL
    let scale: Double
    let headless: Bool
    let renderDriver: RenderDriver
    let frames: Int?
    let screenshot: String?

    private let root = Layer(name: "root")
    private var cards: [Layer] = []
    private let mover = Layer(name: "mover")
    private var photos: [Bitmap] = []

    init(assets: URL, scale: Double, headless: Bool, renderDriver: RenderDriver = .auto, frames: Int?, screenshot: String?) {
        self.assets = assets
        self.scale = scale
        self.headless = headless
        self.renderDriver = renderDriver
        self.frames = frames
        self.screenshot = screenshot
    }

    static let background = Color(rgb: 0x141A22)
    static let modes: [CornerRoundingMode] = [.precomposited, .clipping, .compositorClip]
    static let radii: [Double] = [0, 8, 24, .infinity]  // .infinity: half the short side

    func run() throws {
        let size = Size(width: 960, height: 640)
        let backend = try SDLRenderBackend(.init(title: "Tessera gallery", size: size, scale: scale,
                                                 headless: headless, resizable: true, renderDriver: renderDriver))
        let compositor = Compositor(backend: backend, scale: scale,
                                    configuration: .init(clearColor: Self.background))
        let photoNames = ["astronaut.png", "chelsea.jpg", "coffee.jpg", "rocket.jpg", "hubble_deep_field.jpg",
                          "horse.png", "retina.jpg", "camera.png", "brick.jpg", "clock.jpg", "grass.jpg", "gravel.jpg"]
        photos = try photoNames.map { name in
            let path = assets.appendingPathComponent("photos/\(name)").path
            do { return try Bitmap(contentsOfFile: path) } catch {
                throw GalleryError("cannot load photo \(path): \(error)")
            }
        }
        build(in: compositor.viewportSize)
        print("gallery: renderer \(backend.rendererName), video driver \(backend.window.videoDriverName), " +
              "\(Int(size.width))×\(Int(size.height)) points at \(Int(scale))x")

        let clock: FrameClock = headless ? VirtualFrameClock() : RealFrameClock()
        var frameTimes: [Double] = []
        var totalUploads = 0
        var frame = 0
        running: while true {
            let start = MonotonicClock.nanoseconds()
            for event in compositor.pollEvents() {
                switch event {
                case .quit, .keyDown(.escape, _): break running
                case .resized: build(in: compositor.viewportSize)
                default: break
                }
            }
            animate(time: clock.now)
            frame += 1
            let isLast = frames.map { frame >= $0 } ?? false
            if isLast, let screenshot {
                let url = try compositor.writeScreenshot(of: root, to: screenshot)
                print("gallery: screenshot of frame \(frame) written to \(url.path)")
            } else {
                compositor.render(root)
            }
            totalUploads += compositor.lastFrameStatistics.uploads
            frameTimes.append(MonotonicClock.milliseconds(since: start))
            if isLast { break }
            clock.waitForNextFrame()
        }
        let percentiles = Percentiles(frameTimes)
        if !percentiles.isEmpty {
            let p50 = percentiles.median, p99 = percentiles.percentile(0.99)
            print(String(format: "gallery: %d frames, main thread p50 %.2f ms, p99 %.2f ms, %d uploads, %d KiB of textures",
                         frame, p50, p99, totalUploads, compositor.liveTextureBytes / 1024))
        }
    }

    /// Lays the cards out for `viewport`: a row per corner mode, a column per radius.
    private func build(in viewport: Size) {
        root.removeAllSublayers()
        cards.removeAll()
        root.frame = Rect(origin: .zero, size: viewport)
        let margin = 24.0, gap = 16.0
        let columns = Double(Self.radii.count), rows = Double(Self.modes.count)
        let cardWidth = max(8, ((viewport.width - 2 * margin - (columns - 1) * gap) / columns).rounded(.down))
        let cardHeight = max(8, ((viewport.height - 2 * margin - (rows - 1) * gap) / rows).rounded(.down))
        let cardSize = Size(width: cardWidth, height: cardHeight)
        for (row, mode) in Self.modes.enumerated() {
            for (column, radius) in Self.radii.enumerated() {
                let card = Layer(name: "card-\(mode)-\(column)")
                card.frame = Rect(x: margin + Double(column) * (cardWidth + gap),
                                  y: margin + Double(row) * (cardHeight + gap),
                                  width: cardWidth, height: cardHeight)
                let r = radius.isFinite ? radius : min(cardWidth, cardHeight) / 2
                card.cornerRadius = r
                card.cornerRoundingMode = mode
                card.cornerClipColor = Self.background
                let photo = photos[(row * Self.radii.count + column) % photos.count]
                card.contents = aspectFilled(photo, size: cardSize,
                                             radii: mode == .precomposited ? CornerRadii(r) : .zero)
                root.addSublayer(card)
                cards.append(card)
            }
        }
        mover.frame = Rect(x: 0, y: 0, width: 96, height: 96)
        mover.cornerRadius = 48
        mover.cornerRoundingMode = .compositorClip
        mover.contents = aspectFilled(photos[0], size: mover.frame.size, radii: .zero)
        mover.zPosition = 1
        root.addSublayer(mover)
    }

    /// The photo scaled to cover `size` (centre crop), drawn at the output scale, corners baked when given.
    private func aspectFilled(_ photo: Bitmap, size: Size, radii: CornerRadii) -> Bitmap? {
        guard var context = try? BitmapContext(size: size, scale: scale) else { return nil }
        let bounds = context.bounds
        if !radii.isZero { context.clip(toRoundedRect: bounds, radii: radii) }
        let target = size.width / size.height
        let source = Double(photo.width) / Double(photo.height)
        let crop = source > target
            ? Rect(x: (Double(photo.width) - Double(photo.height) * target) / 2, y: 0,
                   width: Double(photo.height) * target, height: Double(photo.height))
            : Rect(x: 0, y: (Double(photo.height) - Double(photo.width) / target) / 2,
                   width: Double(photo.width), height: Double(photo.width) / target)
        context.draw(photo, in: bounds, from: crop)
        return context.makeBitmap()
    }

    private func animate(time: Double) {
        let bounds = root.frame
        let travel = max(0, bounds.width - mover.frame.width)
        let phase = (sin(time * 1.3) + 1) / 2
        mover.frame.origin = Point(x: travel * phase, y: (bounds.height - mover.frame.height) / 2 + 60 * sin(time * 2.1))
        mover.opacity = 0.65 + 0.35 * sin(time * 0.9)
    }
}

struct GalleryError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
