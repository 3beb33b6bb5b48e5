import Compositor
import FoundationEssentials
import Glibc
import Dispatch
internal import CJPEG
internal import CLCMS
internal import CPNG
internal import CWebP

/// One decode at display size: the reader of its bytes, what they are shown at, the limits, the
/// cancellation check, and where it notes what it did instead of what the file asked.
struct SizedDecode {
    let reader: EncodedReader
    let name: String
    let target: ImageDecoder.Target
    let limits: ImageDecoder.Limits
    let isCancelled: @Sendable () -> Bool
    let notes: DecodeNotes

    var scale: Double { target.scale.isFinite && target.scale > 0 ? target.scale : 1 }

    /// Refuses a decode whose working memory would pass the per-decode budget, then reserves it among
    /// all running decodes for the duration of `body`. nil when cancelled while waiting.
    func withWorkingMemory<R>(_ bytes: Int, _ what: String, _ body: () throws -> R?) throws -> R? {
        guard bytes <= limits.workingMemoryBytes else {
            throw ImageError.overLimit(name, reason: "\(what) needs \(bytes / 1_000_000) MB of working memory; "
                                       + "the limit is \(limits.workingMemoryBytes / 1_000_000) MB")
        }
        guard ImageDecoder.memory.reserve(bytes, isCancelled: isCancelled) else { return nil }
        defer { ImageDecoder.memory.release(bytes) }
        return try body()
    }

    /// The bitmap made from a finished filter, its colours converted to sRGB by `colour` (if any),
    /// turned to its shown orientation.
    func bitmap(_ pixels: [UInt32], plan: DecodePlan, colour: ColourConversion? = nil) throws -> Bitmap {
        var pixels = pixels
        colour?.convert(&pixels)
        let shown = plan.orientation.apply(pixels, width: plan.storedOutput.width, height: plan.storedOutput.height)
        return try Bitmap(width: shown.width, height: shown.height, scale: scale, premultipliedARGB: shown.pixels)
    }

    /// The conversion to sRGB for `choice` and pixels laid out as `layout` (shared through
    /// `ColourConversions.shared`); nil when the pixels are shown as stored: sRGB, or colour
    /// information LittleCMS refused, which is noted.
    func colourConversion(_ choice: ColourChoice, layout: ColourPixelLayout) -> ColourConversion? {
        switch ColourConversions.shared.conversion(for: choice.colour, layout: layout, workingMemoryBytes: limits.workingMemoryBytes) {
        case .success(let conversion?) where conversion.isIdentity:
            notes.colourChosen("as stored (\(choice.origin) describes sRGB)")
            return nil
        case .success(let conversion):
            notes.colourChosen(conversion == nil ? "as stored (sRGB)" : "converted to sRGB from \(choice.origin)")
            return conversion
        case .failure(let refusal):
            notes.colourFallback("\(choice.origin) is not used (\(refusal.reason))")
            notes.colourChosen("as stored (sRGB)")
            return nil
        }
    }

    /// The reader as the context pointer of a codec's C callbacks; valid while this decode runs.
    var readerContext: UnsafeMutableRawPointer { Unmanaged.passUnretained(reader).toOpaque() }
}

/// The C callbacks through which the codecs read: each takes an `EncodedReader` as its context.
enum ReaderCallbacks {
    /// Exactly `count` bytes, fewer only at the end; -1 when reading failed.
    static let read: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int) -> Int = { context, out, count in
        Unmanaged<EncodedReader>.fromOpaque(context!).takeUnretainedValue().callbackRead(into: out!, count: count)
    }
    /// Between 1 and `maximum` bytes, 0 at the end; -1 when reading failed.
    static let readSome: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int) -> Int = { context, out, maximum in
        Unmanaged<EncodedReader>.fromOpaque(context!).takeUnretainedValue().callbackReadSome(into: out!, maximum: maximum)
    }
    /// Moves on without reading.
    static let skip: @convention(c) (UnsafeMutableRawPointer?, Int) -> Void = { context, count in
        Unmanaged<EncodedReader>.fromOpaque(context!).takeUnretainedValue().skip(count)
    }
}

// MARK: - JPEG

extension SizedDecode {
    /// JPEG through libjpeg: the scaled IDCT reduces by 2, 4 or 8 while decoding (the smallest
    /// reduction that still covers the output), rows above the region are skipped, rows below it are
    /// never decoded (nor read), and the area filter folds each row in as it comes. The header walk
    /// gave the EXIF orientation and where the ICC profile lies; the profile's segments are read and
    /// joined here, and the picture converted to sRGB through it: an RGB or grey one once shrunk, a
    /// CMYK one row by row as it is decoded. Other application and comment segments are skipped
    /// unread and counted against `maximumMetadataBlocks`.
    func decodeJPEG(layout: ImageDecoder.Layout) throws -> Bitmap? {
        let orientation = layout.orientation
        if layout.jpegDecodedByScan { try JPEGScanCount.check(reader, from: layout.jpegFirstScanOffset) }
        let profile = try ImageDecoder.jpegProfile(reader, segments: layout.jpegProfileSegments, notes: notes)
        let jpeg = UnsafeMutablePointer<TesseraJPEG>.allocate(capacity: 1)
        jpeg.pointee.created = 0
        defer {
            if jpeg.pointee.created != 0 { DecodeWork.add(\.jpegScans, Int(jpeg.pointee.info.input_scan_number)) }
            tessera_jpeg_close(jpeg)
            jpeg.deallocate()
        }
        reader.seek(to: 0)
        return try withExtendedLifetime(reader) { () -> Bitmap? in
            guard tessera_jpeg_open(jpeg, readerContext, ReaderCallbacks.readSome, ReaderCallbacks.skip,
                                    limits.workingMemoryBytes, Int32(clamping: limits.maximumMetadataBlocks)) == 0 else {
                throw failure(jpeg)
            }
            let width = Int(jpeg.pointee.info.image_width), height = Int(jpeg.pointee.info.image_height)
            let plan = DecodePlan(storedWidth: width, storedHeight: height, orientation: orientation,
                                  target: target, maximumSide: limits.maximumSide)
            let denominator = plan.largestReduction(among: [1, 2, 4, 8])
            let decodedWidth = (width + denominator - 1) / denominator
            let batch = 8
            let working = ByteCount.sum(Int(min(UInt64(Int.max), tessera_jpeg_coefficient_bytes(jpeg))),
                                        ByteCount.product(decodedWidth, 4, batch + 4),
                                        AreaRowFilter.workingBytes(sourceWidth: decodedWidth, outputWidth: plan.storedOutput.width,
                                             outputHeight: plan.storedOutput.height))
            return try withWorkingMemory(working, "this JPEG") { () -> Bitmap? in
                guard tessera_jpeg_start(jpeg, UInt32(denominator)) == 0 else { throw failure(jpeg) }
                let outWidth = Int(jpeg.pointee.info.output_width), outHeight = Int(jpeg.pointee.info.output_height)
                let fx = Double(outWidth) / Double(width), fy = Double(outHeight) / Double(height)
                let r = plan.storedRegion
                var filter = AreaRowFilter(sourceWidth: outWidth,
                                           region: Rect(x: r.minX * fx, y: r.minY * fy, width: r.width * fx, height: r.height * fy),
                                           outputWidth: plan.storedOutput.width, outputHeight: plan.storedOutput.height)
                let needed = filter.neededRows.clamped(to: 0..<outHeight)
                var y = 0
                if needed.lowerBound > 0 {
                    let skipped = tessera_jpeg_skip_rows(jpeg, UInt32(needed.lowerBound))
                    guard skipped >= 0 else { throw failure(jpeg) }
                    y = skipped
                }
                let cmyk = jpeg.pointee.info.out_color_space == JCS_CMYK
                let inverted = tessera_jpeg_adobe(jpeg) != 0
                let pixelLayout: ColourPixelLayout = cmyk ? (inverted ? .cmykInverted : .cmyk)
                    : (jpeg.pointee.info.jpeg_color_space == JCS_GRAYSCALE ? .grey : .bitmap)
                let conversion = profile.flatMap {
                    colourConversion(ColourChoice(colour: .profile(ICCProfile($0)), origin: "its ICC profile"), layout: pixelLayout)
                }
                if profile == nil { notes.colourChosen("as stored (sRGB)") }
                let rowConversion = cmyk ? conversion : nil
                var rows = [UInt8](repeating: 0, count: outWidth * 4 * batch)
                try rows.withUnsafeMutableBufferPointer { rows in
                    while y < needed.upperBound {
                        if isCancelled() { return }
                        let read = tessera_jpeg_read_rows(jpeg, rows.baseAddress, UInt32(batch))
                        guard read >= 0 else { throw failure(jpeg) }
                        if read == 0 { break }
                        rowConversion?.convertRows(rows.baseAddress!, count: outWidth * read)
                        for i in 0..<read {
                            let row = rows.baseAddress! + i * outWidth * 4
                            if cmyk && rowConversion == nil { Self.convertCMYK(row, count: outWidth, inverted: inverted) }
                            filter.add(row: y, rgba: row, premultiplied: true)
                            y += 1
                        }
                    }
                }
                if isCancelled() { return nil }
                return try bitmap(filter.finish(), plan: plan, colour: cmyk ? nil : conversion)
            }
        }
    }

    private func failure(_ jpeg: UnsafeMutablePointer<TesseraJPEG>) -> ImageError {
        if let failure = reader.failure { return failure }
        let message = withUnsafeBytes(of: jpeg.pointee.error.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if message.contains("Insufficient memory") || message.contains("Backing store") {
            return .overLimit(name, reason: "libjpeg needs more than \(limits.workingMemoryBytes / 1_000_000) MB")
        }
        return .decodeFailed(name, reason: message.isEmpty ? "libjpeg failed" : message)
    }

    /// CMYK (as Adobe writes it, inverted, when `inverted`) to RGB in place; alpha 255.
    static func convertCMYK(_ row: UnsafeMutablePointer<UInt8>, count: Int, inverted: Bool) {
        for i in 0..<count {
            let p = row + i * 4
            var c = Int(p[0]), m = Int(p[1]), y = Int(p[2]), k = Int(p[3])
            if !inverted { c = 255 - c; m = 255 - m; y = 255 - y; k = 255 - k }
            p[0] = UInt8((c * k + 127) / 255); p[1] = UInt8((m * k + 127) / 255); p[2] = UInt8((y * k + 127) / 255)
            p[3] = 255
        }
    }
}

// MARK: - PNG

extension SizedDecode {
    /// The most memory one ancillary chunk (an ICC profile, compressed text) may inflate to.
    static let pngChunkLimit = 4 << 20

    /// PNG through libpng: every format (palette, grey, grey + alpha, 16-bit, tRNS) expanded to 8-bit
    /// RGBA. A non-interlaced image is read one row at a time into the area filter, so its memory
    /// follows its width; an interlaced one must be held whole while its passes arrive, and is refused
    /// when that passes the working-memory budget. libpng sees only the chunks it needs
    /// (`PNGChunkStream`): the rest are skipped unread, and nothing after the rows shown is read.
    /// The picture is converted to sRGB once shrunk, from what the colour chunks say
    /// (`PNGColourChunks`), and turned as its `eXIf` chunk says (`orientation`, from the header walk).
    func decodePNG(orientation: ImageOrientation) throws -> Bitmap? {
        let png = UnsafeMutablePointer<TesseraPNG>.allocate(capacity: 1)
        png.initialize(to: TesseraPNG())
        defer { tessera_png_close(png); png.deallocate() }
        let stream = PNGChunkStream(reader: reader, metadataLimit: limits.maximumMetadataBlocks)
        let context = Unmanaged.passUnretained(stream).toOpaque()
        let read: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int) -> Int = { context, out, count in
            Unmanaged<PNGChunkStream>.fromOpaque(context!).takeUnretainedValue().read(into: out!, count: count)
        }
        return try withExtendedLifetime(stream) { () -> Bitmap? in
            let side = UInt32(clamping: max(1, limits.maximumSide))
            guard tessera_png_open(png, context, read, side, Self.pngChunkLimit) == 0 else {
                throw failure(png)
            }
            let width = Int(tessera_png_width(png)), height = Int(tessera_png_height(png))
            let rowBytes = tessera_png_row_bytes(png)
            guard rowBytes == width * 4 else {
                throw ImageError.decodeFailed(name, reason: "unexpected PNG row of \(rowBytes) bytes")
            }
            let conversion = pngColourConversion(png, stream: stream)
            let plan = DecodePlan(storedWidth: width, storedHeight: height, orientation: orientation,
                                  target: target, maximumSide: limits.maximumSide)
            var filter = AreaRowFilter(sourceWidth: width, region: plan.storedRegion,
                                       outputWidth: plan.storedOutput.width, outputHeight: plan.storedOutput.height)
            let interlaced = tessera_png_interlaced(png) != 0
            let filterBytes = AreaRowFilter.workingBytes(sourceWidth: width, outputWidth: plan.storedOutput.width,
                                                         outputHeight: plan.storedOutput.height)
            let whole = ByteCount.product(rowBytes, height)
            let working = ByteCount.sum(interlaced ? whole : ByteCount.product(rowBytes, 3), filterBytes)
            return try withWorkingMemory(working, interlaced ? "this interlaced PNG" : "this PNG") { () -> Bitmap? in
                let needed = filter.neededRows.clamped(to: 0..<height)
                if interlaced {
                    var image = [UInt8](repeating: 0, count: whole)
                    try image.withUnsafeMutableBufferPointer { image in
                        var rows = (0..<height).map { Optional(image.baseAddress! + $0 * rowBytes) }
                        guard tessera_png_read_image(png, &rows) == 0 else { throw failure(png) }
                        for y in needed { filter.add(row: y, rgba: image.baseAddress! + y * rowBytes, premultiplied: false) }
                    }
                } else {
                    var row = [UInt8](repeating: 0, count: rowBytes)
                    try row.withUnsafeMutableBufferPointer { row in
                        for y in 0..<needed.upperBound {
                            if y & 63 == 0, isCancelled() { return }
                            guard tessera_png_read_row(png, row.baseAddress) == 0 else { throw failure(png) }
                            if y >= needed.lowerBound { filter.add(row: y, rgba: row.baseAddress!, premultiplied: false) }
                        }
                    }
                }
                if isCancelled() { return nil }
                return try bitmap(filter.finish(), plan: plan, colour: conversion)
            }
        }
    }

    /// The conversion the colour chunks ask for, once libpng has read every chunk before the image
    /// data: a grey image's profile converts grey, anything else converts RGB.
    private func pngColourConversion(_ png: UnsafeMutablePointer<TesseraPNG>, stream: PNGChunkStream) -> ColourConversion? {
        var profileBytes: UnsafePointer<UInt8>?
        var profileLength: UInt32 = 0
        let profile = tessera_png_profile(png, &profileBytes, &profileLength) == 1 && profileBytes != nil
            ? Array(UnsafeBufferPointer(start: profileBytes, count: Int(profileLength))) : nil
        let refusal = withUnsafeBytes(of: png.pointee.warning) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let choice = stream.colour.resolve(profile: profile, profileRefusal: refusal.isEmpty ? "libpng refused it" : "libpng: \(refusal)",
                                           notes: notes)
        let grey = stream.colourType == 0 || stream.colourType == 4
        return colourConversion(choice, layout: grey ? .grey : .bitmap)
    }

    private func failure(_ png: UnsafeMutablePointer<TesseraPNG>) -> ImageError {
        if let failure = reader.failure { return failure }
        let message = withUnsafeBytes(of: png.pointee.message) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if message.contains("cut short") { return .truncated(name) }
        return .decodeFailed(name, reason: message.isEmpty ? "libpng failed" : message)
    }
}

// MARK: - WebP

extension SizedDecode {
    /// WebP through libwebp, which crops and scales while it decodes, given only the chunks it needs
    /// (`ImageDecoder.webpStream`): EXIF and XMP are never read; the colour profile (`ICCP`) is read,
    /// and the decoded pixels converted to sRGB through it. An animated file shows its first frame.
    /// A bitstream that says it has no alpha (a lossy one without an alpha chunk, a lossless one whose
    /// header says so) is shown opaque whatever its pixels' alpha holds, as libwebp's `dwebp` shows it:
    /// a lossless palette index past the palette's end is opaque black, not a hole. Lossless files are
    /// decoded whole inside libwebp, so they count their full size against the working-memory budget.
    func decodeWebP() throws -> Bitmap? {
        let file = try ImageDecoder.webpStream(reader, metadataLimit: limits.maximumMetadataBlocks, notes: notes)
        return try file.bitstream.withUnsafeBufferPointer { data -> Bitmap? in
            var stream = UnsafeBufferPointer(start: data.baseAddress, count: data.count)
            var features = WebPBitstreamFeatures()
            guard WebPGetFeatures(stream.baseAddress, stream.count, &features) == VP8_STATUS_OK else {
                throw ImageError.decodeFailed(name, reason: "not a valid WebP bitstream")
            }
            if features.has_animation != 0 {
                var frame: UnsafePointer<UInt8>?
                var frameSize = 0
                guard tessera_webp_first_frame(data.baseAddress, data.count, &frame, &frameSize) == 0, let frame else {
                    throw ImageError.decodeFailed(name, reason: "an animated WebP without a readable first frame")
                }
                stream = UnsafeBufferPointer(start: frame, count: frameSize)
                guard WebPGetFeatures(stream.baseAddress, stream.count, &features) == VP8_STATUS_OK else {
                    throw ImageError.decodeFailed(name, reason: "an animated WebP whose first frame is invalid")
                }
            }
            let width = Int(features.width), height = Int(features.height)
            let (pixels, overflow) = width.multipliedReportingOverflow(by: height)
            guard width > 0, height > 0, width <= limits.maximumSide, height <= limits.maximumSide,
                  !overflow, pixels <= limits.maximumPixelCount else {
                throw ImageError.tooLarge(name, width: width, height: height)
            }
            let plan = DecodePlan(storedWidth: width, storedHeight: height, orientation: .up,
                                  target: target, maximumSide: limits.maximumSide)
            let r = plan.storedRegion
            let left = min(width - 1, max(0, Int(r.minX.rounded(.down)))), top = min(height - 1, max(0, Int(r.minY.rounded(.down))))
            let cropWidth = max(1, min(width - left, Int(r.maxX.rounded(.up)) - left))
            let cropHeight = max(1, min(height - top, Int(r.maxY.rounded(.up)) - top))
            let (outWidth, outHeight) = (min(plan.storedOutput.width, cropWidth), min(plan.storedOutput.height, cropHeight))
            let lossless = features.format == 2
            let opaque = features.has_alpha == 0
            // libwebp scales a lossless picture weighted by its alpha, so a pixel with alpha 0 would
            // vanish into its neighbours rather than count as the opaque black it is shown as: such a
            // picture is decoded at its cropped size and shrunk here.
            let shrinkHere = lossless && opaque && (outWidth != cropWidth || outHeight != cropHeight)
            let working = ByteCount.sum(lossless ? ByteCount.product(pixels, 4) : ByteCount.product(width, 4 * 24),
                                        ByteCount.product(outWidth, outHeight, 4),
                                        shrinkHere ? ByteCount.product(cropWidth, cropHeight, 4) : 0,
                                        shrinkHere ? AreaRowFilter.workingBytes(sourceWidth: cropWidth, outputWidth: outWidth,
                                                                                outputHeight: outHeight) : 0)
            let conversion = file.profile.flatMap {
                colourConversion(ColourChoice(colour: .profile(ICCProfile($0)), origin: "its ICCP profile"), layout: .bitmap)
            }
            if file.profile == nil { notes.colourChosen("as stored (sRGB)") }
            return try withWorkingMemory(working, "this WebP") { () -> Bitmap? in
                if isCancelled() { return nil }
                let decode = { (mode: WEBP_CSP_MODE, width: Int, height: Int, out: UnsafeMutableRawBufferPointer) in
                    let status = tessera_webp_decode(stream.baseAddress, stream.count, Int32(left), Int32(top), Int32(cropWidth),
                                                     Int32(cropHeight), Int32(width), Int32(height), mode,
                                                     out.baseAddress!.assumingMemoryBound(to: UInt8.self), out.count)
                    switch status {
                    case 0: break
                    case 7: throw ImageError.truncated(name)  // VP8_STATUS_NOT_ENOUGH_DATA
                    default: throw ImageError.decodeFailed(name, reason: "libwebp status \(status)")
                    }
                }
                var out: [UInt32]
                if shrinkHere {
                    // Straight RGBA at the cropped size, made opaque, then the area filter.
                    var whole = [UInt8](repeating: 0, count: cropWidth * cropHeight * 4)
                    try whole.withUnsafeMutableBytes { try decode(MODE_RGBA, cropWidth, cropHeight, $0) }
                    var filter = AreaRowFilter(sourceWidth: cropWidth, region: Rect(x: 0, y: 0, width: Double(cropWidth), height: Double(cropHeight)),
                                               outputWidth: outWidth, outputHeight: outHeight)
                    whole.withUnsafeMutableBufferPointer { whole in
                        for y in 0..<cropHeight {
                            let row = whole.baseAddress! + y * cropWidth * 4
                            for x in 0..<cropWidth { row[x * 4 + 3] = 255 }
                            filter.add(row: y, rgba: row, premultiplied: true)
                        }
                    }
                    out = filter.finish()
                } else {
                    // Premultiplied BGRA words, as a bitmap holds them; straight when the alpha is to
                    // be ignored (it is then set to 255, the colours kept as they are).
                    out = [UInt32](repeating: 0, count: outWidth * outHeight)
                    try out.withUnsafeMutableBytes { try decode(opaque ? MODE_BGRA : MODE_bgrA, outWidth, outHeight, $0) }
                    if opaque {
                        for i in out.indices { out[i] |= 0xFF00_0000 }
                    }
                }
                conversion?.convert(&out)
                return try Bitmap(width: outWidth, height: outHeight, scale: scale, premultipliedARGB: out)
            }
        }
    }
}
