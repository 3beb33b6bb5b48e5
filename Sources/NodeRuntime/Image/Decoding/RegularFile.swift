#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one way an image file is opened: only a regular file (or a link to one) is, and anything else
/// (a directory, a named pipe, a socket, a device) is refused as `ImageError.notARegularFile` before it
/// is opened. A named pipe opened for reading would wait for a writer forever, taking a display worker
/// with it, and a directory's "size" is a meaningless number.
///
/// The kind is checked on the path (`stat`), then again on what was opened (`fstat`), and the open
/// never waits (`O_NONBLOCK`), so a path replaced by a pipe between the two checks is refused too
/// rather than blocking.
/// - Thread: any
enum RegularFile {
    /// What `mode` is, in words, when it is not a regular file; nil for a regular file.
    static func kind(ofMode mode: mode_t) -> String? {
        switch mode & S_IFMT {
        case S_IFREG: return nil
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a named pipe (FIFO)"
        case S_IFSOCK: return "a socket"
        case S_IFCHR: return "a character device"
        case S_IFBLK: return "a block device"
        case S_IFLNK: return "a symbolic link"
        default: return "not a regular file"
        }
    }

    /// Refuses `path` unless it names a regular file; never opens it.
    /// - Throws: `missingFile` when nothing is there, `notARegularFile` naming what is, `unreadable`
    ///   when the path cannot be examined.
    static func check(_ path: String) throws {
        var info = stat()
        guard stat(path, &info) == 0 else { throw error(for: path, errno: errno) }
        if let kind = kind(ofMode: info.st_mode) { throw ImageError.notARegularFile(path, kind: kind) }
    }

    /// Opens `path` for reading once `check(_:)` passes, and checks what was opened again.
    /// - Returns: a descriptor the caller closes (or hands to `fdopen`).
    static func openForReading(_ path: String) throws -> Int32 {
        try check(path)
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw error(for: path, errno: errno) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let failure = error(for: path, errno: errno)
            close(descriptor)
            throw failure
        }
        if let kind = kind(ofMode: info.st_mode) {
            close(descriptor)
            throw ImageError.notARegularFile(path, kind: kind)
        }
        return descriptor
    }

    private static func error(for path: String, errno code: Int32) -> ImageError {
        if code == ENOENT || code == ENOTDIR { return .missingFile(path) }
        return .unreadable(path, reason: String(cString: strerror(code)))
    }
}
