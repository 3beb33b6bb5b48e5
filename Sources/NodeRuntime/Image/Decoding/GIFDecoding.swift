import Compositor
internal import CGIF

extension SizedDecode {
    /// GIF through giflib: the first frame, placed on the canvas the header walk measured (the screen
    /// and the frame's extent), transparent outside the frame and where the graphic-control extension
    /// says. giflib reads the screen and the global colour table, then is moved straight to the frame
    /// the walk found, so it never sees an extension, and nothing after the frame's rows is read. Rows
    /// fold into the area filter as they are decoded; an interlaced frame is held as one byte a pixel
    /// while its passes arrive. A frame cut short keeps the rows that arrived.
    func decodeGIF(layout: ImageDecoder.Layout) throws -> Bitmap? {
        let canvasWidth = layout.header.width, canvasHeight = layout.header.height
        let transparentIndex = layout.gifTransparentIndex
        reader.seek(to: 0)
        var gifReader = TesseraGIFReader(context: readerContext, read: ReaderCallbacks.read)
        return try withExtendedLifetime(reader) { () -> Bitmap? in
            try withUnsafeMutablePointer(to: &gifReader) { gifReader -> Bitmap? in
                var error: Int32 = 0
                guard let gif = tessera_gif_open(gifReader, &error) else { throw failure(error) }
                defer { var closeError: Int32 = 0; _ = DGifCloseFile(gif, &closeError) }
                reader.seek(to: layout.gifFrameOffset)
                var record = UNDEFINED_RECORD_TYPE
                guard DGifGetRecordType(gif, &record) == GIF_OK, record == IMAGE_DESC_RECORD_TYPE,
                      DGifGetImageDesc(gif) == GIF_OK else {
                    throw failure(gif.pointee.Error)
                }
                let frame = gif.pointee.Image
                let left = Int(frame.Left), top = Int(frame.Top), width = Int(frame.Width), height = Int(frame.Height)
                guard width > 0, height > 0, left + width <= canvasWidth, top + height <= canvasHeight else {
                    throw ImageError.decodeFailed(name, reason: "a GIF frame outside the measured canvas")
                }
                guard let map = frame.ColorMap ?? gif.pointee.SColorMap, map.pointee.ColorCount > 0 else {
                    throw ImageError.decodeFailed(name, reason: "a GIF frame without a colour table")
                }
                var palette = [UInt32](repeating: 0, count: 256)
                for i in 0..<min(256, Int(map.pointee.ColorCount)) where i != transparentIndex {
                    let c = map.pointee.Colors[i]
                    palette[i] = 0xFF00_0000 | UInt32(c.Red) << 16 | UInt32(c.Green) << 8 | UInt32(c.Blue)
                }
                let plan = DecodePlan(storedWidth: canvasWidth, storedHeight: canvasHeight, orientation: .up,
                                      target: target, maximumSide: limits.maximumSide)
                let interlaced = frame.Interlace
                let working = ByteCount.sum(ByteCount.product(canvasWidth, 8), interlaced ? ByteCount.product(width, height) : 0,
                                            AreaRowFilter.workingBytes(sourceWidth: canvasWidth, outputWidth: plan.storedOutput.width,
                                                                       outputHeight: plan.storedOutput.height))
                return try withWorkingMemory(working, "this GIF") { () -> Bitmap? in
                    var filter = AreaRowFilter(sourceWidth: canvasWidth, region: plan.storedRegion,
                                               outputWidth: plan.storedOutput.width, outputHeight: plan.storedOutput.height)
                    // Frame rows in canvas order: decoded straight, or gathered from the four passes.
                    var indices = [GifPixelType](repeating: 0, count: interlaced ? width * height : width)
                    var rowsRead = 0
                    if interlaced {
                        let passes = [(0, 8), (4, 8), (2, 4), (1, 2)]
                        passLoop: for (start, step) in passes {
                            for y in stride(from: start, to: height, by: step) {
                                let ok = indices.withUnsafeMutableBufferPointer {
                                    DGifGetLine(gif, $0.baseAddress! + y * width, Int32(width)) == GIF_OK
                                }
                                if !ok { break passLoop }
                                rowsRead += 1
                            }
                        }
                        rowsRead = rowsRead > 0 ? height : 0  // passes spread over every row; the rest stay index 0
                    }
                    var canvasRow = [UInt8](repeating: 0, count: canvasWidth * 4)
                    for y in 0..<canvasHeight {
                        if y & 63 == 0, isCancelled() { return nil }
                        let frameRow = y - top
                        for i in canvasRow.indices { canvasRow[i] = 0 }
                        if frameRow >= 0, frameRow < height {
                            var have = interlaced ? rowsRead > 0 : false
                            if !interlaced, rowsRead == frameRow {
                                have = indices.withUnsafeMutableBufferPointer {
                                    DGifGetLine(gif, $0.baseAddress, Int32(width)) == GIF_OK
                                }
                                if have { rowsRead += 1 }
                            }
                            if have {
                                let offset = interlaced ? frameRow * width : 0
                                for x in 0..<width {
                                    let argb = palette[Int(indices[offset + x])]
                                    let p = (left + x) * 4
                                    canvasRow[p] = UInt8((argb >> 16) & 0xFF); canvasRow[p + 1] = UInt8((argb >> 8) & 0xFF)
                                    canvasRow[p + 2] = UInt8(argb & 0xFF); canvasRow[p + 3] = UInt8(argb >> 24)
                                }
                            }
                        }
                        canvasRow.withUnsafeBufferPointer { filter.add(row: y, rgba: $0.baseAddress!, premultiplied: false) }
                    }
                    guard rowsRead > 0 else { throw ImageError.truncated(name) }
                    if isCancelled() { return nil }
                    return try bitmap(filter.finish(), plan: plan)
                }
            }
        }
    }

    private func failure(_ code: Int32) -> ImageError {
        if let failure = reader.failure { return failure }
        let message = GifErrorString(code).map { String(cString: $0) } ?? "giflib error \(code)"
        if code == D_GIF_ERR_READ_FAILED || code == D_GIF_ERR_EOF_TOO_SOON { return .truncated(name) }
        return .decodeFailed(name, reason: message)
    }
}
