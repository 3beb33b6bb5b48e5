import Compositor
internal import CWebP

extension ImageDecoder {
    /// What a header walk finds: the header, and what the format's decoder needs from the walk.
    /// - Thread: any (a value)
    struct Layout {
        var header: Header
        /// The EXIF orientation of a JPEG (its first EXIF block) or a PNG (its `eXIf` chunk before
        /// the image data); `.up` for every other format.
        var orientation: ImageOrientation = .up
        /// Where a JPEG's ICC profile lies (its APP2 "ICC_PROFILE" segments, read when decoding).
        var jpegProfileSegments: [JPEGProfileSegment] = []
        /// Where a GIF's first frame starts (its image descriptor) and its transparent colour index
        /// (-1 for none), from the graphic-control extension before it.
        var gifFrameOffset = 0
        var gifTransparentIndex = -1
        /// How many bytes from the start hold a BMP's pixels (what SDL_image is given).
        var bmpEnd = 0
        /// Where a JPEG's first scan starts (its marker), and whether libjpeg must hold its
        /// coefficients and decode it scan by scan: a progressive frame, or a first scan without
        /// every component. Such a file's scans are counted before it is decoded (`JPEGScanCount`).
        var jpegFirstScanOffset = 0
        var jpegDecodedByScan = false
    }

    /// Reads the header of the bytes in `reader`, from its start, as far as the header needs and no
    /// further: a PNG's chunks up to its image data, skipping each by its length and reading only the
    /// first `eXIf`; a JPEG's segments up to its first scan, skipping each by its
    /// length and reading only the first EXIF block; a GIF's blocks up to its first frame; a BMP's
    /// headers; a WebP's first chunk. At most `metadataLimit` metadata blocks are passed before the
    /// image data; one more is refused.
    /// - Throws: `ImageError`: empty, unsupported, truncated, or refused (`decodeFailed`).
    static func readLayout(_ reader: EncodedReader, metadataLimit: Int) throws -> Layout {
        let name = reader.name
        guard reader.size > 0 else { throw ImageError.empty(name) }
        reader.seek(to: 0)
        let head = try reader.bytes(30)
        if head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
            return try pngLayout(reader, header: try pngHeader(head, source: name), metadataLimit: metadataLimit)
        }
        if head.starts(with: [0xFF, 0xD8]) {
            return try jpegLayout(reader, metadataLimit: metadataLimit)
        }
        if head.starts(with: Array("GIF87a".utf8)) || head.starts(with: Array("GIF89a".utf8)) {
            return try gifLayout(reader, metadataLimit: metadataLimit)
        }
        if head.starts(with: Array("BM".utf8)) {
            reader.seek(to: 0)
            let (header, end) = try bmpHeader(of: try reader.bytes(64), length: reader.size, source: name)
            var layout = Layout(header: header)
            layout.bmpEnd = end
            return layout
        }
        if head.count >= 12, head.starts(with: Array("RIFF".utf8)), head[8..<12].elementsEqual("WEBP".utf8) {
            return Layout(header: try webpHeader(reader, head: head))
        }
        throw ImageError.unsupportedFormat(name)
    }

    /// The refusal for one metadata block past `limit`.
    static func tooManyMetadataBlocks(_ source: String, limit: Int, _ what: String) -> ImageError {
        .decodeFailed(source, reason: "more than \(limit) metadata blocks (\(what)) before the image data")
    }

    // MARK: PNG

    /// Signature, then the IHDR chunk: length 13, "IHDR", width, height, bit depth, colour type.
    private static func pngHeader(_ bytes: [UInt8], source: String) throws -> Header {
        func u32be(_ i: Int) -> Int { Int(bytes[i]) << 24 | Int(bytes[i + 1]) << 16 | Int(bytes[i + 2]) << 8 | Int(bytes[i + 3]) }
        guard bytes.count >= 26 else { throw ImageError.truncated(source) }
        guard u32be(8) == 13, bytes[12..<16].elementsEqual("IHDR".utf8) else {
            throw ImageError.decodeFailed(source, reason: "the PNG does not start with a valid IHDR chunk")
        }
        let width = u32be(16), height = u32be(20)
        guard width <= Int(Int32.max), height <= Int(Int32.max) else {
            throw ImageError.decodeFailed(source, reason: "the PNG claims a size over 2³¹−1")
        }
        let depth = Int(bytes[24]), colour = Int(bytes[25])
        guard PNGChunkStream.channels(colourType: colour, depth: depth) != nil else {
            throw ImageError.decodeFailed(source, reason: "PNG colour type \(colour) with bit depth \(depth)")
        }
        return Header(format: .png, width: width, height: height)
    }

    /// Walks a PNG's chunks after the header up to its image data by their lengths, for the first
    /// `eXIf` chunk's orientation (the specification puts it before the image data; one after it is
    /// not looked for, as nothing after the image data is read). Every other chunk is skipped unread;
    /// a walk that meets the end of the bytes or a chunk it cannot measure stops there and leaves
    /// the verdict to the decoder.
    private static func pngLayout(_ reader: EncodedReader, header: Header, metadataLimit: Int) throws -> Layout {
        var layout = Layout(header: header)
        var offset = 33  // the signature and the header chunk
        var ancillary = 0
        while true {
            let found: PNGChunkHeader?
            do {
                found = try PNGChunkHeader.read(reader, at: offset)
            } catch ImageError.decodeFailed {
                break  // a chunk the walk cannot measure (a length over 2³¹ − 1) ends it too
            }
            guard let chunk = found else { break }
            let type = chunk.type
            if type == .IDAT || type == .IEND { break }
            if type.isAncillary && type != .tRNS {
                ancillary += 1
                guard ancillary <= metadataLimit else {
                    throw tooManyMetadataBlocks(reader.name, limit: metadataLimit, "PNG chunks")
                }
            }
            if type == .eXIf {
                let block = try reader.bytes(min(chunk.length, exifBytesRead))
                layout.orientation = block.withUnsafeBufferPointer { ImageOrientation.fromPNGEXIF($0) }
                break
            }
            offset = chunk.end
        }
        return layout
    }

    // MARK: JPEG

    /// How much of the first EXIF block is read for the orientation: all of it (a segment holds at
    /// most 65,533 bytes).
    static let exifBytesRead = 65_533

    /// What starts an APP2 segment that carries part of an ICC profile ("ICC_PROFILE" and a zero).
    static let iccSegmentHeader: [UInt8] = Array("ICC_PROFILE".utf8) + [0]

    /// How many bytes between a JPEG's segments that belong to none (fill bytes included) are passed
    /// over before the file is refused.
    static let maximumStrayBytes = 4_096

    /// Walks a JPEG's segments by their lengths up to its first scan: the frame header gives the size,
    /// the first APP1 block that is EXIF gives the orientation, APP2 blocks that are "ICC_PROFILE"
    /// are noted where they lie (their numbers read, their bytes left for the decode); every other
    /// segment is skipped unread.
    private static func jpegLayout(_ reader: EncodedReader, metadataLimit: Int) throws -> Layout {
        let source = reader.name
        reader.seek(to: 2)
        var size: (width: Int, height: Int)?
        var orientation = ImageOrientation.up
        var sawEXIF = false
        var segments = 0
        var profileSegments: [JPEGProfileSegment] = []
        var progressive = false, components = 0
        var firstScan: (offset: Int, components: Int)?
        // A damaged file may have a few bytes between segments, and any file may pad with 0xFF before
        // a marker; a run of either is no JPEG, and is not walked byte by byte.
        var strayBytes = 0
        func stray() throws {
            strayBytes += 1
            guard strayBytes <= maximumStrayBytes else {
                throw ImageError.decodeFailed(source, reason: "more than \(maximumStrayBytes) stray bytes between JPEG segments")
            }
        }
        walk: while let first = try reader.byte() {
            guard first == 0xFF else { try stray(); continue }
            var marker: UInt8 = 0xFF
            while marker == 0xFF {
                guard let next = try reader.byte() else { break walk }
                if next == 0xFF { try stray() }
                marker = next
            }
            if marker == 0x00 || marker == 0x01 || marker == 0xD8 || (0xD0...0xD7).contains(marker) { continue }
            if marker == 0xDA {
                // The first scan: the header is behind. Its component count says whether it is the only one.
                let start = reader.position - 2
                let scan = try reader.bytes(3)
                firstScan = (start, scan.count == 3 ? Int(scan[2]) : 0)
                break
            }
            if marker == 0xD9 { break }  // the end
            let lengthBytes = try reader.bytes(2)
            guard lengthBytes.count == 2 else { break }
            let length = Int(lengthBytes[0]) << 8 | Int(lengthBytes[1])
            guard length >= 2 else { throw ImageError.decodeFailed(source, reason: "bad JPEG marker length") }
            let payload = reader.position
            let isFrame = (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
            if isFrame {
                let frame = try reader.bytes(6)
                guard frame.count == 6 else { throw ImageError.truncated(source) }
                size = (Int(frame[3]) << 8 | Int(frame[4]), Int(frame[1]) << 8 | Int(frame[2]))
                progressive = [0xC2, 0xC6, 0xCA, 0xCE].contains(marker)
                components = Int(frame[5])
            } else {
                segments += 1
                guard segments <= metadataLimit else {
                    throw tooManyMetadataBlocks(source, limit: metadataLimit, "JPEG segments")
                }
                if marker == 0xE1, !sawEXIF {
                    let block = try reader.bytes(min(length - 2, exifBytesRead))
                    if block.starts(with: [0x45, 0x78, 0x69, 0x66, 0, 0]) {
                        sawEXIF = true
                        orientation = block.withUnsafeBufferPointer { ImageOrientation.fromEXIF($0) }
                    }
                } else if marker == 0xE2, length - 2 >= iccSegmentHeader.count + 2 {
                    let block = try reader.bytes(iccSegmentHeader.count + 2)
                    if block.starts(with: iccSegmentHeader) {
                        let prefix = iccSegmentHeader.count + 2
                        profileSegments.append(JPEGProfileSegment(sequence: Int(block[prefix - 2]), count: Int(block[prefix - 1]),
                                                                  offset: payload + prefix, length: length - 2 - prefix))
                    }
                }
            }
            reader.seek(to: payload + length - 2)
        }
        guard let size else { throw ImageError.truncated(source) }
        var layout = Layout(header: Header(format: .jpeg, width: size.width, height: size.height), orientation: orientation,
                            jpegProfileSegments: profileSegments)
        if let firstScan {
            layout.jpegFirstScanOffset = firstScan.offset
            layout.jpegDecodedByScan = progressive || firstScan.components < components
        }
        return layout
    }

    // MARK: GIF

    /// A GIF's claimed size and its first frame: the logical screen, then the blocks up to the first
    /// frame's descriptor, whose extent (offset plus size) the canvas takes in. Extensions before it
    /// are skipped (their sub-blocks can only be walked one by one), the graphic-control one read for
    /// the transparent colour. Only the first frame is shown, so nothing after it is read.
    private static func gifLayout(_ reader: EncodedReader, metadataLimit: Int) throws -> Layout {
        let source = reader.name
        reader.seek(to: 0)
        let screen = try reader.bytes(13)
        guard screen.count == 13 else { throw ImageError.truncated(source) }
        func u16le(_ bytes: [UInt8], _ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 }
        if screen[10] & 0x80 != 0 { reader.skip(3 << (Int(screen[10] & 0x07) + 1)) }
        var transparentIndex = -1
        var extensions = 0
        /// Skips a run of data sub-blocks; throws when the bytes end first.
        func skipSubBlocks() throws {
            while true {
                guard let size = try reader.byte() else { throw ImageError.truncated(source) }
                if size == 0 { return }
                reader.skip(Int(size))
            }
        }
        while true {
            guard let introducer = try reader.byte() else { throw ImageError.truncated(source) }
            switch introducer {
            case 0x3B:
                throw ImageError.truncated(source)  // the trailer, before any frame
            case 0x21:
                extensions += 1
                guard extensions <= metadataLimit else {
                    throw tooManyMetadataBlocks(source, limit: metadataLimit, "GIF extensions")
                }
                guard let label = try reader.byte() else { throw ImageError.truncated(source) }
                if label == 0xF9 {
                    guard let size = try reader.byte() else { throw ImageError.truncated(source) }
                    let control = try reader.bytes(Int(size))
                    guard control.count == Int(size) else { throw ImageError.truncated(source) }
                    transparentIndex = control.count >= 4 && control[0] & 1 != 0 ? Int(control[3]) : -1
                    if size == 0 { continue }
                }
                try skipSubBlocks()
            case 0x2C:
                let frameOffset = reader.position - 1
                let descriptor = try reader.bytes(9)
                guard descriptor.count == 9 else { throw ImageError.truncated(source) }
                let left = u16le(descriptor, 0), top = u16le(descriptor, 2)
                let frameWidth = u16le(descriptor, 4), frameHeight = u16le(descriptor, 6)
                guard frameWidth > 0, frameHeight > 0 else {
                    throw ImageError.decodeFailed(source, reason: "a GIF frame of \(frameWidth)×\(frameHeight) pixels")
                }
                if descriptor[8] & 0x80 != 0 { reader.skip(3 << (Int(descriptor[8] & 0x07) + 1)) }
                // The LZW minimum code size is 2–8 bits.
                if let codeSize = try reader.byte(), !(2...8).contains(codeSize) {
                    throw ImageError.decodeFailed(source, reason: "a GIF frame with an LZW code size of \(codeSize) bits")
                }
                let header = Header(format: .gif, width: max(u16le(screen, 6), left + frameWidth),
                                    height: max(u16le(screen, 8), top + frameHeight))
                var layout = Layout(header: header)
                layout.gifFrameOffset = frameOffset
                layout.gifTransparentIndex = transparentIndex
                return layout
            default:
                throw ImageError.decodeFailed(source, reason: "an unknown GIF block 0x\(String(introducer, radix: 16))")
            }
        }
    }

    // MARK: BMP

    /// A BMP's claimed size from its first bytes, checked against the file's `length`: uncompressed
    /// pixel rows must all be there (a 154-byte file cannot hold 6000×6000 pixels), and the pixel data
    /// must start inside the file. Returns the header and where the pixels end (the whole file when
    /// that is not known from the headers).
    static func bmpHeader(of bytes: [UInt8], length: Int, source: String) throws -> (Header, end: Int) {
        func u16le(_ i: Int) -> Int { Int(bytes[i]) | Int(bytes[i + 1]) << 8 }
        func u32le(_ i: Int) -> Int { u16le(i) | u16le(i + 2) << 16 }
        func s32le(_ i: Int) -> Int { Int(Int32(bitPattern: UInt32(u32le(i)))) }
        guard bytes.count >= 26 else { throw ImageError.truncated(source) }
        let dataOffset = u32le(10), infoSize = u32le(14)
        let width: Int, height: Int, bitsPerPixel: Int, compression: Int
        var imageSize = 0
        if infoSize == 12 {
            (width, height) = (u16le(18), u16le(20))
            (bitsPerPixel, compression) = (u16le(24), 0)
        } else if infoSize >= 40 {
            guard bytes.count >= 38 else { throw ImageError.truncated(source) }
            (width, height) = (s32le(18), abs(s32le(22)))
            (bitsPerPixel, compression) = (u16le(28), u32le(30))
            imageSize = u32le(34)
        } else {
            throw ImageError.decodeFailed(source, reason: "a BMP info header of \(infoSize) bytes")
        }
        guard width > 0, height > 0 else {
            throw ImageError.decodeFailed(source, reason: "a BMP of \(width)×\(height) pixels")
        }
        guard [1, 4, 8, 16, 24, 32].contains(bitsPerPixel) else {
            throw ImageError.decodeFailed(source, reason: "a BMP of \(bitsPerPixel) bits per pixel")
        }
        guard dataOffset >= 14 + infoSize, dataOffset < length else { throw ImageError.truncated(source) }
        let header = Header(format: .bmp, width: width, height: height)
        if compression == 0 || compression == 3 || compression == 6 {
            // Rows padded to four bytes; every multiplication checked, whatever the claimed size.
            let (bits, o1) = width.multipliedReportingOverflow(by: bitsPerPixel)
            let stride = (bits + 31) / 32 * 4
            let (pixels, o2) = stride.multipliedReportingOverflow(by: height)
            let (needed, o3) = pixels.addingReportingOverflow(dataOffset)
            guard !o1, !o2, !o3, needed <= length else { throw ImageError.truncated(source) }
            return (header, needed)
        }
        // Run-length coded: the headers' image size when they give one.
        let (end, overflow) = dataOffset.addingReportingOverflow(imageSize)
        return (header, imageSize > 0 && !overflow ? min(length, end) : length)
    }

    // MARK: WebP

    /// How many bytes from the start of a WebP file hold the size, by its first chunk: an extended
    /// header (`VP8X`) and a lossy bitstream (`VP8 `) need 30, a lossless one (`VP8L`) 25 (the chunk
    /// header, the signature byte and 28 bits of size), so the smallest lossless files, 26 bytes and
    /// up, have their size before the 30th byte.
    static func webpHeaderBytes(firstChunk: ArraySlice<UInt8>) -> Int {
        firstChunk.elementsEqual("VP8L".utf8) ? 25 : 30
    }

    /// A WebP's size from its first chunk: the canvas of an extended file (`VP8X`), else the bitstream's
    /// own header, read by libwebp from the first bytes.
    private static func webpHeader(_ reader: EncodedReader, head: [UInt8]) throws -> Header {
        let source = reader.name
        guard head.count >= 16, head.count >= webpHeaderBytes(firstChunk: head[12..<16]) else {
            throw ImageError.truncated(source)
        }
        if head[12..<16].elementsEqual("VP8X".utf8) {
            func u24le(_ i: Int) -> Int { Int(head[i]) | Int(head[i + 1]) << 8 | Int(head[i + 2]) << 16 }
            return Header(format: .webp, width: u24le(24) + 1, height: u24le(27) + 1)
        }
        var width: Int32 = 0, height: Int32 = 0
        guard head.withUnsafeBufferPointer({ WebPGetInfo($0.baseAddress, $0.count, &width, &height) }) != 0 else {
            throw ImageError.decodeFailed(source, reason: "the WebP header is not valid")
        }
        return Header(format: .webp, width: Int(width), height: Int(height))
    }

    /// What a WebP decode reads of its file: the chunks libwebp needs, and the colour profile.
    struct WebPFile {
        /// The chunks libwebp needs to show the image, in a container of their own.
        var bitstream: [UInt8]
        /// The first `ICCP` chunk's profile, when there is one of at most
        /// `ColourConversions.maximumProfileBytes`.
        var profile: [UInt8]?
    }

    /// The chunks of a WebP file libwebp needs to show it, gathered into a container of their own:
    /// the header chunk (its profile and metadata flags cleared), the alpha and image chunks of a still
    /// image, or the animation chunk and the first frame of an animated one; and the colour profile of
    /// an extended file's first `ICCP` chunk (one over `ColourConversions.maximumProfileBytes` is
    /// skipped unread and noted in `notes`). The chunks are walked here, by their lengths, rather than
    /// through libwebp's demuxer, which would need the whole file in memory: EXIF, XMP and unknown
    /// chunks are skipped unread (at most `metadataLimit` chunks in all), and nothing after the image
    /// is read.
    static func webpStream(_ reader: EncodedReader, metadataLimit: Int, notes: DecodeNotes) throws -> WebPFile {
        let source = reader.name
        func u32le(_ bytes: [UInt8], _ i: Int) -> Int {
            Int(bytes[i]) | Int(bytes[i + 1]) << 8 | Int(bytes[i + 2]) << 16 | Int(bytes[i + 3]) << 24
        }
        func le32(_ value: Int) -> [UInt8] { (0..<4).map { UInt8((value >> (8 * $0)) & 0xFF) } }
        reader.seek(to: 0)
        let riff = try reader.bytes(12)
        guard riff.count == 12 else { throw ImageError.truncated(source) }
        var kept: [UInt8] = []
        var profile: [UInt8]?
        var sawProfile = false
        var skipped = 0
        var offset = 12
        var isExtended = false
        while true {
            reader.seek(to: offset)
            let head = try reader.bytes(8)
            guard head.count == 8 else { throw ImageError.truncated(source) }
            let type = String(decoding: head[0..<4], as: UTF8.self)
            let length = u32le(head, 4)
            let padded = length + (length & 1)
            let (end, overflow) = offset.addingReportingOverflow(8 + padded)
            guard !overflow, end - (length & 1) <= reader.size else { throw ImageError.truncated(source) }
            switch type {
            case "VP8X", "ALPH", "ANIM", "VP8 ", "VP8L", "ANMF":
                var payload = try reader.bytes(length)
                guard payload.count == length else { throw ImageError.truncated(source) }
                if type == "VP8X" {
                    guard offset == 12, length >= 10 else {
                        throw ImageError.decodeFailed(source, reason: "the WebP header is not valid")
                    }
                    isExtended = true
                    payload[0] &= ~(0x20 | 0x08 | 0x04)  // no profile, EXIF or XMP follows
                }
                kept += head[0..<4] + le32(length) + payload + (length & 1 == 1 ? [0] : [])
                if type == "VP8 " || type == "VP8L" || type == "ANMF" || !isExtended {
                    return WebPFile(bitstream: Array("RIFF".utf8) + le32(4 + kept.count) + Array("WEBP".utf8) + kept,
                                    profile: profile)
                }
            default:
                guard isExtended else { throw ImageError.decodeFailed(source, reason: "the WebP header is not valid") }
                skipped += 1
                guard skipped <= metadataLimit else {
                    throw tooManyMetadataBlocks(source, limit: metadataLimit, "WebP chunks")
                }
                if type == "ICCP" && !sawProfile {
                    sawProfile = true
                    if length <= ColourConversions.maximumProfileBytes {
                        let payload = try reader.bytes(length)
                        guard payload.count == length else { throw ImageError.truncated(source) }
                        profile = payload
                    } else {
                        notes.colourFallback("its ICCP profile is not used (\(length) bytes, over the "
                                             + "\(ColourConversions.maximumProfileBytes)-byte limit)")
                    }
                }
            }
            guard end < reader.size else { throw ImageError.truncated(source) }
            offset = end
        }
    }
}
