import Compositor
import FoundationEssentials
import Glibc
import Dispatch
internal import CJPEG

/// Pictures of a progressive JPEG while its bytes arrive: coarse after its first scans, sharper with
/// each scan after, through libjpeg's buffered-image mode over a source that suspends where the bytes
/// end (see `TesseraJPEGStream` in the CJPEG shim).
///
/// Each call to `update` reads what arrived; when a scan has been read in full since the last picture,
/// it makes one picture as of the latest complete scan (scans that arrived together make one
/// picture, not one each), at the target's size, with the EXIF orientation of the header. A baseline
/// JPEG, or anything else, makes none (`isFinished`): it shows when whole. So does a file that passes
/// the limits or that libjpeg refuses: the decode of the whole bytes says why.
///
/// The picture of the last scan is never made here: once every byte has arrived, the whole file is
/// decoded as any other source, so the final image is the same one a file or byte source gives.
/// - Thread: one thread at a time (a fetch's queue)
final class ProgressiveJPEGDecoder {
    private enum Phase {
        case header
        case starting(DecodePlan, denominator: Int)
        case scanning(DecodePlan)
        case finished
    }

    private let name: String
    private let target: ImageDecoder.Target
    private let limits: ImageDecoder.Limits
    private let stream: UnsafeMutablePointer<TesseraJPEGStream>
    private var phase = Phase.header
    /// The scan the last picture showed (0: none yet).
    private(set) var shownScan = 0
    /// Pictures made so far.
    private(set) var pictures = 0
    /// The scans in the bytes so far, counted before libjpeg reads them (its buffered-image mode has
    /// no limit of its own), and how many of the bytes were counted.
    private var scanCount = JPEGScanCount()
    private var countedBytes = 0

    /// Nil when libjpeg cannot be set up.
    init?(name: String, target: ImageDecoder.Target, limits: ImageDecoder.Limits) {
        self.name = name
        self.target = target
        self.limits = limits
        stream = .allocate(capacity: 1)
        guard tessera_jpeg_stream_create(stream, limits.workingMemoryBytes) == 0 else {
            tessera_jpeg_stream_close(stream)
            stream.deallocate()
            return nil
        }
    }

    deinit {
        DecodeWork.add(\.jpegScans, Int(stream.pointee.info.input_scan_number))
        tessera_jpeg_stream_close(stream)
        stream.deallocate()
    }

    /// True once no picture will come: not progressive, refused, or every scan read.
    var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    /// Reads `bytes` (all the bytes so far; more may follow) and returns a picture when a scan was
    /// completed since the last one; nil otherwise. `isCancelled` is asked between rows.
    func update(_ bytes: [UInt8], isCancelled: () -> Bool) -> Bitmap? {
        if isFinished { return nil }
        return bytes.withUnsafeBufferPointer { buffer -> Bitmap? in
            guard let base = buffer.baseAddress else { return nil }
            let length = buffer.count
            if countedBytes < length {
                let within = scanCount.add(UnsafeBufferPointer(rebasing: buffer[countedBytes...]))
                countedBytes = length
                guard within else { return stop() }
            }
            if case .header = phase {
                switch tessera_jpeg_stream_read_header(stream, base, length, 0) {
                case 0: return nil
                case 1: break
                default: return stop()
                }
                guard tessera_jpeg_stream_is_progressive(stream) != 0, let plan = plan(bytes) else { return stop() }
                phase = .starting(plan, denominator: plan.largestReduction(among: [1, 2, 4, 8]))
            }
            if case let .starting(plan, denominator) = phase {
                switch tessera_jpeg_stream_start(stream, base, length, 0, UInt32(denominator)) {
                case 0: return nil
                case 1: phase = .scanning(plan)
                default: return stop()
                }
            }
            guard case .scanning(let plan) = phase else { return nil }
            let complete = Int(tessera_jpeg_stream_consume(stream, base, length, 0))
            guard complete >= 0 else { return stop() }
            // Every scan is in: the whole file's decode makes the final picture.
            if stream.pointee.reached_end != 0 { return stop() }
            guard complete > shownScan else { return nil }
            switch tessera_jpeg_stream_start_output(stream, base, length, 0, Int32(complete)) {
            case 0: return nil
            case 1: break
            default: return stop()
            }
            guard let picture = readPass(plan, base: base, length: length, isCancelled: isCancelled) else { return stop() }
            guard tessera_jpeg_stream_finish_output(stream, base, length, 0) >= 0 else { return stop() }
            shownScan = complete
            pictures += 1
            return isCancelled() ? nil : picture
        }
    }

    private func stop() -> Bitmap? {
        phase = .finished
        return nil
    }

    /// The plan for the header just read, or nil when the image passes the limits: its size, its
    /// metadata blocks, or the memory its coefficients and rows need.
    private func plan(_ bytes: [UInt8]) -> DecodePlan? {
        let info = stream.pointee.info
        let width = Int(info.image_width), height = Int(info.image_height)
        let header = ImageDecoder.Header(format: .jpeg, width: width, height: height)
        guard (try? ImageDecoder.checkSize(header, source: name, limits: limits)) != nil,
              let layout = try? ImageDecoder.readLayout(EncodedReader(bytes: bytes, name: name),
                                                         metadataLimit: limits.maximumMetadataBlocks) else { return nil }
        let plan = DecodePlan(storedWidth: width, storedHeight: height, orientation: layout.orientation,
                              target: target, maximumSide: limits.maximumSide)
        let denominator = plan.largestReduction(among: [1, 2, 4, 8])
        let decodedWidth = (width + denominator - 1) / denominator
        let coefficients = Int(min(UInt64(Int.max), withUnsafePointer(to: stream.pointee.info) {
            tessera_jpeg_info_coefficient_bytes($0, 1)
        }))
        let working = ByteCount.sum(coefficients, ByteCount.product(decodedWidth, 4, Self.batch + 4),
                                    AreaRowFilter.workingBytes(sourceWidth: decodedWidth, outputWidth: plan.storedOutput.width,
                                                               outputHeight: plan.storedOutput.height))
        return working <= limits.workingMemoryBytes ? plan : nil
    }

    private static let batch = 8

    /// The output pass started: its rows through the area filter, turned to the shown orientation.
    private func readPass(_ plan: DecodePlan, base: UnsafePointer<UInt8>, length: Int,
                          isCancelled: () -> Bool) -> Bitmap? {
        let info = stream.pointee.info
        let width = Int(info.image_width), height = Int(info.image_height)
        let outWidth = Int(info.output_width), outHeight = Int(info.output_height)
        guard outWidth > 0, outHeight > 0 else { return nil }
        let fx = Double(outWidth) / Double(width), fy = Double(outHeight) / Double(height)
        let r = plan.storedRegion
        var filter = AreaRowFilter(sourceWidth: outWidth,
                                   region: Rect(x: r.minX * fx, y: r.minY * fy, width: r.width * fx, height: r.height * fy),
                                   outputWidth: plan.storedOutput.width, outputHeight: plan.storedOutput.height)
        let needed = filter.neededRows.clamped(to: 0..<outHeight)
        let cmyk = info.out_color_space == JCS_CMYK
        let inverted = info.saw_Adobe_marker != 0
        var rows = [UInt8](repeating: 0, count: outWidth * 4 * Self.batch)
        let complete = rows.withUnsafeMutableBufferPointer { rows -> Bool in
            var y = 0
            while y < needed.upperBound {
                if isCancelled() { return false }
                let read = tessera_jpeg_stream_read_rows(stream, base, length, 0, rows.baseAddress, UInt32(Self.batch))
                guard read > 0 else { return false }
                for index in 0..<read {
                    let row = rows.baseAddress! + index * outWidth * 4
                    if y >= needed.lowerBound {
                        if cmyk { SizedDecode.convertCMYK(row, count: outWidth, inverted: inverted) }
                        filter.add(row: y, rgba: row, premultiplied: true)
                    }
                    y += 1
                }
            }
            return true
        }
        guard complete else { return nil }
        let shown = plan.orientation.apply(filter.finish(), width: plan.storedOutput.width, height: plan.storedOutput.height)
        let scale = target.scale.isFinite && target.scale > 0 ? target.scale : 1
        return try? Bitmap(width: shown.width, height: shown.height, scale: scale, premultipliedARGB: shown.pixels)
    }
}
