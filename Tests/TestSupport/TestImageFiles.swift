/// Encoded image files made by the tests themselves, byte by byte, so every PNG variant and every
/// kind of lie can be produced without a second encoder.
public enum TestImageFiles {
    /// A PNG of any colour type (0 grey, 2 RGB, 3 palette, 4 grey + alpha, 6 RGBA) and bit depth,
    /// optionally Adam7-interlaced. `sample(x, y)` gives the pixel's samples at `bitDepth` (one index
    /// for palette images). Image data is stored uncompressed (deflate's stored blocks).
    public static func png(width: Int, height: Int, colourType: UInt8, bitDepth: UInt8, interlaced: Bool = false,
                           palette: [UInt8]? = nil, transparency: [UInt8]? = nil,
                           sample: (Int, Int) -> [Int]) -> [UInt8] {
        let channels: Int = [0: 1, 2: 3, 3: 1, 4: 2, 6: 4][Int(colourType)] ?? 4
        let depth = Int(bitDepth)
        func row(_ xs: [Int], _ y: Int) -> [UInt8] {
            var out: [UInt8] = [0]  // filter: none
            var bits = 0, acc = 0
            for x in xs {
                for value in sample(x, y).prefix(channels) {
                    if depth == 16 { out += [UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]; continue }
                    if depth == 8 { out.append(UInt8(value & 0xFF)); continue }
                    acc = acc << depth | (value & ((1 << depth) - 1))
                    bits += depth
                    if bits == 8 { out.append(UInt8(acc)); bits = 0; acc = 0 }
                }
            }
            if bits > 0 { out.append(UInt8((acc << (8 - bits)) & 0xFF)) }
            return out
        }
        var raw: [UInt8] = []
        if interlaced {
            let passes = [(0, 0, 8, 8), (4, 0, 8, 8), (0, 4, 4, 8), (2, 0, 4, 4), (0, 2, 2, 4), (1, 0, 2, 2), (0, 1, 1, 2)]
            for (x0, y0, dx, dy) in passes {
                let xs = Array(stride(from: x0, to: width, by: dx))
                guard !xs.isEmpty else { continue }
                for y in stride(from: y0, to: height, by: dy) { raw += row(xs, y) }
            }
        } else {
            for y in 0..<height { raw += row(Array(0..<width), y) }
        }
        var file: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        file += chunk("IHDR", be32(width) + be32(height) + [bitDepth, colourType, 0, 0, interlaced ? 1 : 0])
        if let palette { file += chunk("PLTE", palette) }
        if let transparency { file += chunk("tRNS", transparency) }
        file += chunk("IDAT", zlibStored(raw))
        file += chunk("IEND", [])
        return file
    }

    /// One PNG chunk: length, type, data, CRC.
    public static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let body = Array(type.utf8) + data
        return be32(data.count) + body + be32(Int(crc32(body)))
    }

    public static func be32(_ v: Int) -> [UInt8] { [24, 16, 8, 0].map { UInt8((v >> $0) & 0xFF) } }

    /// A zlib stream of stored (uncompressed) deflate blocks.
    public static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65_535, data.count - offset)
            let final: UInt8 = offset + count == data.count ? 1 : 0
            out += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += data[offset..<(offset + count)]
            offset += count
        } while offset < data.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in data { a = (a + UInt32(byte)) % 65_521; b = (b + a) % 65_521 }
        return out + be32(Int(b << 16 | a))
    }

    public static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
        }
        return ~crc
    }

    /// EXIF data from its TIFF header on, as a PNG's `eXIf` chunk holds it: big-endian, one image
    /// directory with one entry, Orientation (0x0112), SHORT, `orientation` (1–8).
    public static func exifTIFF(orientation: Int) -> [UInt8] {
        var tiff: [UInt8] = Array("MM".utf8) + [0, 42] + be32(8)
        tiff += [0, 1] + [0x01, 0x12, 0, 3] + be32(1) + [0, UInt8(orientation), 0, 0] + be32(0)
        return tiff
    }

    /// `jpeg` with an EXIF block carrying `orientation` (1–8) inserted after its start marker.
    public static func jpeg(_ jpeg: [UInt8], withOrientation orientation: Int) -> [UInt8] {
        // "Exif\0\0", then the TIFF structure.
        let payload = Array("Exif".utf8) + [0, 0] + exifTIFF(orientation: orientation)
        let length = payload.count + 2
        let segment: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        return Array(jpeg[0..<2]) + segment + Array(jpeg[2...])
    }
}
