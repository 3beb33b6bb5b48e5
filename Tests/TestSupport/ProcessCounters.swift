import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What the kernel counts for this process, for tests that bound the work a hostile input costs by
/// what was done rather than by how long it took: the bytes read (`rchar` in /proc/self/io) and the
/// peak resident set (`VmHWM` in /proc/self/status, which writing 5 to /proc/self/clear_refs resets).
/// Each returns nil where the kernel does not say (the caller skips).
/// - Thread: any
public enum ProcessCounters {
    /// Bytes this process has read from files and pipes so far.
    public static func bytesRead() -> Int? {
        field("/proc/self/io", "rchar:")
    }

    /// Resets the peak resident set to what is resident now; false where the kernel does not allow it.
    public static func resetPeakResident() -> Bool {
        let descriptor = open("/proc/self/clear_refs", O_WRONLY)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return write(descriptor, "5", 1) == 1
    }

    /// The most bytes resident at once since the start or the last `resetPeakResident()`.
    public static func peakResidentBytes() -> Int? {
        field("/proc/self/status", "VmHWM:").map { $0 * 1024 }
    }

    /// Bytes resident now.
    public static func residentBytes() -> Int? {
        field("/proc/self/status", "VmRSS:").map { $0 * 1024 }
    }

    /// The number after `name` on its line of the file at `path`.
    private static func field(_ path: String, _ name: String) -> Int? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var buffer = [UInt8](repeating: 0, count: 8192)
        let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        let text = String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name) }) else { return nil }
        return Int(line.dropFirst(name.count).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "")
    }
}
