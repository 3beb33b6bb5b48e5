#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Passes over every pixel of a bitmap: the opacity scan and the conversions between alpha layouts.
///
/// They belong on the thread that makes a bitmap (a display worker), never on the UI thread at upload:
/// each pass that runs on the UI thread is counted (`uiThreadCount`), and the compositor reports the
/// ones its uploads caused in `FrameStatistics.uploadPixelPasses`.
/// - Thread: any
package enum PixelPass {
    /// Passes run on the UI thread since the process started.
    private static let uiThreadPasses = Atomic<Int>(0)

    /// Per-pixel passes (opacity scans, alpha conversions) that ran on the UI thread so far.
    /// - Thread: any
    package static var uiThreadCount: Int { uiThreadPasses.load(ordering: .relaxed) }

    /// Counts one pass if the caller is the UI thread.
    @inline(__always)
    static func record() {
        if UIThread.isCurrent { uiThreadPasses.add(1, ordering: .relaxed) }
    }

    /// True when every pixel's alpha is 255. ANDs runs of pixels together (a loop the compiler
    /// vectorizes) and stops after the first run with a translucent pixel, so a bitmap with a clear
    /// corner or background answers after a few kilobytes.
    static func allOpaque(_ pixels: UnsafeBufferPointer<UInt32>) -> Bool {
        let run = 1024
        var start = 0
        while start < pixels.count {
            let end = min(pixels.count, start + run)
            var all: UInt32 = 0xFFFF_FFFF
            for index in start..<end { all &= pixels[index] }
            if all < 0xFF00_0000 { return false }
            start = end
        }
        return true
    }

    /// `pixels` converted to `layout` from the other one (one pass, counted when on the UI thread).
    static func converted(_ pixels: [UInt32], to layout: Bitmap.AlphaLayout) -> [UInt32] {
        record()
        return [UInt32](unsafeUninitializedCapacity: pixels.count) { out, count in
            pixels.withUnsafeBufferPointer { source in
                switch layout {
                case .straight: unpremultiply(source, into: out)
                case .premultiplied: premultiply(source, into: out)
                }
            }
            count = pixels.count
        }
    }

    /// Premultiplied to straight, channel by channel through `unpremultiplyTable` (the same values as
    /// `unpremultiply(premultipliedARGB:)`, without its three divisions).
    static func unpremultiply(_ source: UnsafeBufferPointer<UInt32>, into out: UnsafeMutableBufferPointer<UInt32>) {
        convert(source, into: out, through: unpremultiplyTable)
    }

    /// Straight to premultiplied, as `premultiply(straightARGB:)` does, through `premultiplyTable`.
    static func premultiply(_ source: UnsafeBufferPointer<UInt32>, into out: UnsafeMutableBufferPointer<UInt32>) {
        convert(source, into: out, through: premultiplyTable)
    }

    /// Maps each colour channel through `table` (indexed by alpha × 256 + channel); opaque pixels
    /// stay as they are and fully transparent ones become 0.
    private static func convert(_ source: UnsafeBufferPointer<UInt32>, into out: UnsafeMutableBufferPointer<UInt32>,
                                through table: [UInt8]) {
        table.withUnsafeBufferPointer { table in
            for index in 0..<source.count {
                let p = source[index]
                let a = p >> 24
                if a == 255 || a == 0 {
                    out.initializeElement(at: index, to: a == 0 ? 0 : p)
                    continue
                }
                let row = Int(a) << 8
                let r = UInt32(table[row | Int((p >> 16) & 0xFF)])
                let g = UInt32(table[row | Int((p >> 8) & 0xFF)])
                let b = UInt32(table[row | Int(p & 0xFF)])
                out.initializeElement(at: index, to: (a << 24) | (r << 16) | (g << 8) | b)
            }
        }
    }

    /// Premultiplies `pixels` in place (straight ARGB8888 read back from a renderer, say).
    static func premultiplyInPlace(_ pixels: inout [UInt32]) {
        pixels.withUnsafeMutableBufferPointer { buffer in
            premultiply(UnsafeBufferPointer(buffer), into: buffer)
        }
    }
}

/// `unpremultiplyTable[alpha << 8 | channel]`: the straight channel of a premultiplied one.
private let unpremultiplyTable: [UInt8] = (0..<65_536).map { key in
    let a = UInt32(key >> 8), c = UInt32(key & 0xFF)
    return UInt8(unpremultiply(premultipliedARGB: (a << 24) | c) & 0xFF)
}

/// `premultiplyTable[alpha << 8 | channel]`: the premultiplied channel of a straight one.
private let premultiplyTable: [UInt8] = (0..<65_536).map { key in
    let a = UInt32(key >> 8), c = UInt32(key & 0xFF)
    return UInt8(premultiply(straightARGB: (a << 24) | c) & 0xFF)
}
