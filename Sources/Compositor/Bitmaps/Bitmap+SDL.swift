// Where a bitmap meets SDL: SDL_image decodes files and bytes into surfaces and writes PNG and JPEG
// files from them. A surface's pixels enter a `Bitmap` as plain rows, through the same initializer and
// checks as any other rows, so no SDL type leaves this file.

internal import CSDL
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Bitmap {
    /// A bitmap from an SDL surface of any pixel format: SDL converts it to ARGB8888, and its rows are
    /// read as `init(width:height:scale:format:bytesPerRow:rows:)` reads any rows, with the same checks.
    /// The surface is only read; the caller keeps ownership.
    /// - Throws: `BitmapError` for a size `Bitmap` refuses (checked before SDL converts anything), a
    ///   surface SDL cannot convert, or rows that do not hold the surface's size.
    init(surface: UnsafeMutablePointer<SDL_Surface>, scale: Double = 1) throws {
        let width = Int(surface.pointee.w), height = Int(surface.pointee.h)
        try Bitmap.validate(width: width, height: height, scale: scale)
        guard let converted = SDL_ConvertSurfaceFormat(surface, SDL_PIXELFORMAT_ARGB8888.rawValue, 0) else {
            throw BitmapError.decodeFailed(source: "SDL surface", reason: String(cString: SDL_GetError()))
        }
        defer { SDL_FreeSurface(converted) }
        // Locking is a no-op for a surface that is not RLE-encoded, and required for one that is.
        SDL_LockSurface(converted)
        defer { SDL_UnlockSurface(converted) }
        let pitch = Int(converted.pointee.pitch)
        let byteCount = pitch > 0 && height > 0 && converted.pointee.pixels != nil ? pitch * height : 0
        try self.init(width: width, height: height, scale: scale, format: .straightARGB8888, bytesPerRow: pitch,
                      rows: UnsafeRawBufferPointer(start: converted.pointee.pixels, count: byteCount))
    }

    /// Decodes PNG, JPEG or any format SDL_image reads, from bytes in memory.
    /// - Throws: `BitmapError.decodeFailed` with SDL_image's reason; never traps on bad data.
    public init(encoded data: [UInt8], scale: Double = 1, sourceName: String = "image data") throws {
        guard !data.isEmpty else { throw BitmapError.decodeFailed(source: sourceName, reason: "no bytes") }
        let surface: UnsafeMutablePointer<SDL_Surface>? = data.withUnsafeBytes { raw in
            guard let stream = SDL_RWFromConstMem(raw.baseAddress, Int32(clamping: raw.count)) else { return nil }
            return IMG_Load_RW(stream, 1)
        }
        guard let surface else {
            throw BitmapError.decodeFailed(source: sourceName, reason: String(cString: SDL_GetError()))
        }
        defer { SDL_FreeSurface(surface) }
        try self.init(surface: surface, scale: scale)
    }

    /// Decodes an image file (PNG, JPEG, …; the name's extension is SDL_image's hint, as `IMG_Load`
    /// takes it). Only a regular file is read: the path is opened without waiting and checked, so a
    /// named pipe never blocks the caller and a directory or a device is refused.
    /// - Throws: `BitmapError.decodeFailed` naming the path when it is missing, unreadable, not a
    ///   regular file, or not an image.
    public init(contentsOfFile path: String, scale: Double = 1) throws {
        let bytes = try Bitmap.contentsOfRegularFile(path)
        guard !bytes.isEmpty else { throw BitmapError.decodeFailed(source: path, reason: "no bytes") }
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let type = name.lastIndex(of: ".").map { String(name[name.index(after: $0)...]) } ?? ""
        let surface: UnsafeMutablePointer<SDL_Surface>? = bytes.withUnsafeBytes { raw in
            guard let stream = SDL_RWFromConstMem(raw.baseAddress, Int32(clamping: raw.count)) else { return nil }
            return IMG_LoadTyped_RW(stream, 1, type)
        }
        guard let surface else {
            throw BitmapError.decodeFailed(source: path, reason: String(cString: SDL_GetError()))
        }
        defer { SDL_FreeSurface(surface) }
        try self.init(surface: surface, scale: scale)
    }

    /// The bytes of the regular file at `path`. Opened without waiting (`O_NONBLOCK`), then checked
    /// on what was opened (`fstat`): anything but a regular file is refused before it is read.
    static func contentsOfRegularFile(_ path: String) throws -> [UInt8] {
        func failure(_ reason: String) -> BitmapError { .decodeFailed(source: path, reason: reason) }
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw failure(String(cString: strerror(errno))) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw failure("not a regular file") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var done = 0
        while done < bytes.count {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, $0.count - done, off_t(done)) }
            if got < 0 {
                if errno == EINTR { continue }
                throw failure(String(cString: strerror(errno)))
            }
            if got == 0 { break }
            done += got
        }
        return done == bytes.count ? bytes : Array(bytes.prefix(done))
    }

    /// Writes the bitmap as a PNG with straight alpha. An empty bitmap cannot be written.
    public func writePNG(to path: String) throws {
        try write(to: path) { IMG_SavePNG($0, path) }
    }

    /// Writes the bitmap as a baseline JPEG of `quality` (1–100); alpha is dropped. For tests and
    /// benchmarks that need JPEG files of a known picture.
    public func writeJPEG(to path: String, quality: Int = 90) throws {
        try write(to: path) { IMG_SaveJPG($0, path, Int32(min(100, max(1, quality)))) }
    }

    private func write(to path: String, _ save: (UnsafeMutablePointer<SDL_Surface>) -> Int32) throws {
        guard !isEmpty else { throw BitmapError.encodeFailed(path: path, reason: "empty bitmap") }
        var straight = withPixels(in: .straight) { Array($0) }
        let status: Int32 = straight.withUnsafeMutableBytes { raw in
            guard let surface = SDL_CreateRGBSurfaceWithFormatFrom(
                raw.baseAddress, Int32(width), Int32(height), 32, Int32(width * 4),
                SDL_PIXELFORMAT_ARGB8888.rawValue)
            else { return -1 }
            defer { SDL_FreeSurface(surface) }
            return save(surface)
        }
        guard status == 0 else {
            throw BitmapError.encodeFailed(path: path, reason: String(cString: SDL_GetError()))
        }
    }
}
