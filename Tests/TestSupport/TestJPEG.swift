import CJPEG

/// JPEG files made by the tests through libjpeg itself (`tessera_jpeg_encode` in the CJPEG shim):
/// baseline or progressive (libjpeg's standard scan script, as `cjpeg -progressive` writes), of any
/// picture the test draws, so no encoder program is needed on the machine.
public enum TestJPEG {
    /// Encodes `width` × `height` pixels whose colour `rgb(x, y)` gives as (red, green, blue).
    /// - Thread: any
    public static func encode(width: Int, height: Int, quality: Int = 90, progressive: Bool,
                              rgb: (Int, Int) -> (UInt8, UInt8, UInt8)) -> [UInt8] {
        var pixels = [UInt8](repeating: 0, count: width * height * 3)
        for y in 0..<height {
            for x in 0..<width {
                let (r, g, b) = rgb(x, y)
                let index = (y * width + x) * 3
                pixels[index] = r; pixels[index + 1] = g; pixels[index + 2] = b
            }
        }
        var out: UnsafeMutablePointer<UInt8>?
        var size: UInt = 0
        var message = [CChar](repeating: 0, count: Int(JMSG_LENGTH_MAX))
        let status = pixels.withUnsafeBufferPointer { pixels in
            tessera_jpeg_encode(pixels.baseAddress, UInt32(width), UInt32(height), Int32(quality), progressive ? 1 : 0,
                                &out, &size, &message)
        }
        precondition(status == 0, "libjpeg could not encode: \(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))")
        defer { tessera_jpeg_free(out) }
        return Array(UnsafeBufferPointer(start: out, count: Int(size)))
    }

    /// The offsets of the start-of-scan markers (FF DA) of a JPEG, in order: cutting the file just
    /// before the (n+1)th leaves n whole scans.
    public static func scanOffsets(_ jpeg: [UInt8]) -> [Int] {
        var offsets: [Int] = []
        var index = 2
        // Walk the segments up to each scan, then its entropy-coded data (where FF is followed by 00,
        // a restart marker, or the next marker).
        while index + 4 <= jpeg.count {
            guard jpeg[index] == 0xFF else { index += 1; continue }
            let marker = jpeg[index + 1]
            if marker == 0xD9 { break }
            let length = Int(jpeg[index + 2]) << 8 | Int(jpeg[index + 3])
            if marker == 0xDA {
                offsets.append(index)
                index += 2 + length
                while index + 1 < jpeg.count {
                    if jpeg[index] == 0xFF, jpeg[index + 1] != 0x00, !(0xD0...0xD7).contains(jpeg[index + 1]) { break }
                    index += 1
                }
            } else {
                index += 2 + length
            }
        }
        return offsets
    }
}
