public import FoundationEssentials
import Dispatch
import Compositor
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Encoded images fetched by URL, kept in a directory within a byte budget, least recently used out
/// first, so an image shown once shows again without the network (after a restart, or with the server
/// gone).
///
/// - One file per URL, named by a stable 128-bit hash of the URL; the file holds a header (a magic
///   number, the URL, the body's length and a checksum of both) and the body. A file is written
///   under a temporary name in the same directory and renamed into place, so a reader sees the old
///   file or the new one, never half of one.
/// - A file that does not check out (another format, a short or long file, a checksum that does not
///   match, another URL under the same name) is a miss and is removed (`statistics.corruptFilesRemoved`).
///   What another process may have put in an entry's place costs nothing: the file is opened without
///   following a link or waiting (a named pipe never blocks the open), and read only when it is a
///   regular file of the size the index holds whose header agrees with that size and claims a body
///   of at most `maximumBodyBytes`; anything else is a miss, removed, having read at most its header.
/// - The budget counts whole files. Storing past it removes the least recently used files; a hit makes
///   its file the most recently used and touches its modification time, which orders the files when
///   the next process opens the directory. A body larger than the budget is not stored.
/// - Leftover temporary files (from a process that stopped mid-write) are removed when the cache opens
///   the directory; files of other names are left alone and not counted.
/// - One process per directory: the index of files lives in this object.
/// - Thread: any
public final class ImageDiskCache: Sendable {
    /// Counts since the cache was made.
    /// - Thread: any (a value)
    public struct Statistics: Sendable, Equatable {
        public var hits = 0
        public var misses = 0
        /// Files that did not check out, removed when read.
        public var corruptFilesRemoved = 0
        /// Files removed to keep within the budget.
        public var evictions = 0
        /// Stores that could not write their file (the cache goes on without it).
        public var writeFailures = 0
    }

    /// Why a cache could not be opened.
    /// - Thread: any (a value)
    public enum OpenError: Error, Equatable, Sendable, CustomStringConvertible {
        /// The directory could not be made or is not a directory.
        case unusableDirectory(String, reason: String)

        public var description: String {
            switch self {
            case let .unusableDirectory(path, reason): return "image disk cache at \(path): \(reason)"
            }
        }
    }

    /// The directory the files live in.
    public let directory: String

    private struct State {
        /// File names (without the directory) and their sizes, least recently used first, bounded by
        /// the budget.
        var files: LRUCache<String, Int>
        var statistics = Statistics()
        var maximumBodyBytes: Int
    }
    private let state: Locked<State>

    /// Where the cache lives by default: `$XDG_CACHE_HOME/tessera/images`, or
    /// `~/.cache/tessera/images` without it.
    /// - Thread: any
    public static var defaultDirectory: String {
        let environment = ProcessInfo.processInfo.environment
        if let base = environment["XDG_CACHE_HOME"], base.hasPrefix("/") { return base + "/tessera/images" }
        return FileManager.default.homeDirectoryForCurrentUser.path + "/.cache/tessera/images"
    }

    /// Opens (making it when missing) the cache in `directory`, within `budgetBytes`, indexing the
    /// files already there by their modification times; evicts at once if they pass the budget.
    /// - Throws: `OpenError.unusableDirectory` when the directory cannot be made or is a file.
    /// - Thread: any (it lists the directory: not the UI thread)
    public init(directory: String, budgetBytes: Int, maximumBodyBytes: Int = 32 << 20) throws(OpenError) {
        self.directory = directory
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw .unusableDirectory(directory, reason: "\(error)")
        }
        var status = stat()
        guard stat(directory, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else {
            throw .unusableDirectory(directory, reason: "not a directory")
        }
        var found: [(name: String, size: Int, modified: Double)] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            let path = directory + "/" + name
            if name.hasPrefix(Self.temporaryPrefix) {
                unlink(path)
                continue
            }
            guard Self.isEntryName(name) else { continue }
            var info = stat()
            guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            found.append((name, Int(info.st_size), Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9))
        }
        var files = LRUCache<String, Int>(budget: .max)
        for file in found.sorted(by: { $0.modified < $1.modified }) {
            _ = files.insert(file.size, for: file.name, cost: file.size)
        }
        files.budget = max(0, budgetBytes)
        let evicted = files.evict()
        for entry in evicted { unlink(directory + "/" + entry.key) }
        var statistics = Statistics()
        statistics.evictions = evicted.count
        state = Locked(State(files: files, statistics: statistics, maximumBodyBytes: max(0, maximumBodyBytes)))
    }

    /// The most bytes the files may take; lowering it removes files at once.
    /// - Thread: any
    public var budgetBytes: Int {
        get { state.withLock { $0.files.budget } }
        set {
            let directory = self.directory
            state.withLock { state in
                state.files.budget = max(0, newValue)
                let evicted = state.files.evict()
                // Removed under the lock, so a store of the same name cannot slip in between.
                for entry in evicted { unlink(directory + "/" + entry.key) }
                state.statistics.evictions += evicted.count
            }
        }
    }

    /// The longest body stored or read back, in bytes (default 32 MB, the loader's
    /// `maximumBodyBytes`): a longer one is not stored, and a file claiming one is a miss, unread.
    /// - Thread: any
    public var maximumBodyBytes: Int {
        get { state.withLock { $0.maximumBodyBytes } }
        set { state.withLock { $0.maximumBodyBytes = max(0, newValue) } }
    }

    /// The bytes the cache's files take now.
    /// - Thread: any
    public var byteCount: Int { state.withLock { $0.files.totalCost } }

    /// The number of files.
    /// - Thread: any
    public var count: Int { state.withLock { $0.files.count } }

    /// Counts since the cache was made.
    /// - Thread: any
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// The body stored for `url`, or nil (a miss: none stored, or a file that does not check out,
    /// which is removed).
    /// - Thread: any (it reads a file: not the UI thread)
    public func bytes(for url: URL) -> [UInt8]? {
        let key = url.absoluteString
        let name = Self.entryName(for: key)
        let indexed = state.withLock { state -> (size: Int, maximumBody: Int)? in
            guard let size = state.files.value(for: name) else {
                state.statistics.misses += 1
                return nil
            }
            return (size, state.maximumBodyBytes)
        }
        guard let indexed else { return nil }
        let path = directory + "/" + name
        switch Self.readEntry(at: path, key: key, expectedSize: indexed.size, maximumBodyBytes: indexed.maximumBody) {
        case .found(let body):
            // Kept for the next process's order of use; a failure only loses that order.
            _ = utimensat(AT_FDCWD, path, nil, 0)
            state.withLock { $0.statistics.hits += 1 }
            return body
        case .otherKey:
            state.withLock { $0.statistics.misses += 1 }
            return nil
        case .missing:
            state.withLock { state in
                _ = state.files.remove(name)
                state.statistics.misses += 1
            }
            return nil
        case .corrupt:
            state.withLock { state in
                if state.files.remove(name) != nil { unlink(path) }
                state.statistics.misses += 1
                state.statistics.corruptFilesRemoved += 1
            }
            return nil
        }
    }

    /// Stores `body` for `url` (replacing what was there), then removes the least recently used files
    /// past the budget. A body over the budget or over `maximumBodyBytes` is not stored. A file that cannot be written is
    /// reported once in `TesseraLog.images` and counted (`statistics.writeFailures`); the cache goes
    /// on without it.
    /// - Returns: whether the body was stored.
    /// - Thread: any (it writes a file: not the UI thread)
    @discardableResult
    public func store(_ body: [UInt8], for url: URL) -> Bool {
        let key = url.absoluteString
        let name = Self.entryName(for: key)
        guard body.count <= maximumBodyBytes else { return false }
        let file = Self.encodeEntry(key: key, body: body)
        guard file.count <= budgetBytes else { return false }
        let temporary = directory + "/" + Self.temporaryPrefix + name + "-" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        if let failure = Self.writeFile(file, to: temporary) {
            unlink(temporary)
            reportWriteFailure("cannot write \(temporary): \(failure)")
            return false
        }
        let path = directory + "/" + name
        let directory = self.directory
        let failure = state.withLock { state -> String? in
            // Renamed and indexed in one step, so an eviction never removes a file it did not index.
            guard rename(temporary, path) == 0 else { return String(cString: strerror(errno)) }
            let removed = state.files.insert(file.count, for: name, cost: file.count)
            var evicted = 0
            for entry in removed where entry.key != name {
                unlink(directory + "/" + entry.key)
                evicted += 1
            }
            state.statistics.evictions += evicted
            return nil
        }
        if let failure {
            unlink(temporary)
            reportWriteFailure("cannot rename \(temporary) to \(path): \(failure)")
            return false
        }
        return true
    }

    /// Removes every file of the cache (and only those).
    /// - Thread: any (not the UI thread)
    public func removeAll() {
        let directory = self.directory
        state.withLock { state in
            for entry in state.files.removeAll() { unlink(directory + "/" + entry.key) }
        }
    }

    private func reportWriteFailure(_ message: String) {
        let first = state.withLock { state -> Bool in
            state.statistics.writeFailures += 1
            return state.statistics.writeFailures == 1
        }
        if first { TesseraLog.images.warning("image disk cache: \(message); images are not kept on disk while this lasts") }
    }

    // MARK: Files

    static let temporaryPrefix = ".writing-"
    /// "TSIMAGE" and a format version.
    static let magic: [UInt8] = [0x54, 0x53, 0x49, 0x4D, 0x41, 0x47, 0x45, 0x01]
    static let headerBytes = 32

    /// The file name for a URL: 32 hex digits of a hash that is the same in every process.
    static func entryName(for key: String) -> String {
        let bytes = Array(key.utf8)
        let first = StableHash.hash(bytes, seed: 0x243F_6A88_85A3_08D3)
        let second = StableHash.hash(bytes, seed: 0x1319_8A2E_0370_7344)
        func hex(_ value: UInt64) -> String {
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return hex(first) + hex(second)
    }

    static func isEntryName(_ name: String) -> Bool {
        name.utf8.count == 32 && name.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// Header (magic, URL length, body length, checksum of URL and body), URL, body.
    static func encodeEntry(key: String, body: [UInt8]) -> [UInt8] {
        let keyBytes = Array(key.utf8)
        var file = magic
        file.reserveCapacity(headerBytes + keyBytes.count + body.count)
        appendLittleEndian(&file, UInt64(keyBytes.count), bytes: 8)
        appendLittleEndian(&file, UInt64(body.count), bytes: 8)
        appendLittleEndian(&file, checksum(key: keyBytes, body: body), bytes: 8)
        file += keyBytes
        file += body
        return file
    }

    static func checksum(key: [UInt8], body: [UInt8]) -> UInt64 {
        StableHash.hash(body, seed: StableHash.hash(key, seed: 0x5EED))
    }

    private static func appendLittleEndian(_ bytes: inout [UInt8], _ value: UInt64, bytes count: Int) {
        for index in 0..<count { bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index)))) }
    }

    private static func littleEndian(_ bytes: [UInt8], at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<8 { value |= UInt64(bytes[offset + index]) << (8 * UInt64(index)) }
        return value
    }

    enum ReadResult {
        case found([UInt8])
        case missing
        case corrupt
        /// A whole file, but for another URL whose name hashes alike.
        case otherKey
    }

    /// Reads the entry at `path` for `key`, opened without following a link or waiting (a named pipe
    /// put in its place never blocks the open), and read only when what was opened is a regular file
    /// of `expectedSize` bytes (the size the index holds) whose header agrees with that size and
    /// claims a body of at most `maximumBodyBytes`: anything else is `.corrupt`,
    /// having read at most the header, so a file swapped for a huge (or sparse) one costs nothing.
    static func readEntry(at path: String, key: String, expectedSize: Int, maximumBodyBytes: Int) -> ReadResult {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else { return errno == ENOENT ? .missing : .corrupt }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return .corrupt }
        let size = Int(info.st_size)
        guard size == expectedSize, size >= headerBytes else { return .corrupt }
        func readFully(_ buffer: UnsafeMutableRawBufferPointer) -> Bool {
            var done = 0
            while done < buffer.count {
                let got = read(descriptor, buffer.baseAddress! + done, buffer.count - done)
                if got < 0 && errno == EINTR { continue }
                guard got > 0 else { return false }
                done += got
            }
            return true
        }
        var header = [UInt8](repeating: 0, count: headerBytes)
        guard header.withUnsafeMutableBytes(readFully), Array(header[0..<8]) == magic else { return .corrupt }
        let keyCount = littleEndian(header, at: 8), bodyCount = littleEndian(header, at: 16)
        guard keyCount <= UInt64(size), bodyCount <= UInt64(size),
              UInt64(headerBytes) + keyCount + bodyCount == UInt64(size) else { return .corrupt }
        guard bodyCount <= UInt64(max(0, maximumBodyBytes)) else { return .corrupt }
        var rest = [UInt8](repeating: 0, count: size - headerBytes)
        guard rest.withUnsafeMutableBytes(readFully) else { return .corrupt }
        let keyBytes = Array(rest[0..<Int(keyCount)])
        let body = Array(rest[Int(keyCount)...])
        guard checksum(key: keyBytes, body: body) == littleEndian(header, at: 24) else { return .corrupt }
        guard keyBytes == Array(key.utf8) else { return .otherKey }
        return .found(body)
    }

    /// Writes `bytes` to a new file at `path`; the reason on failure.
    private static func writeFile(_ bytes: [UInt8], to path: String) -> String? {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o644)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        var done = 0
        while done < bytes.count {
            let written = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + done, bytes.count - done) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else {
                let reason = String(cString: strerror(errno))
                close(descriptor)
                return reason
            }
            done += written
        }
        guard close(descriptor) == 0 else { return String(cString: strerror(errno)) }
        return nil
    }
}

/// A 64-bit hash that is the same in every process and on every run (unlike `Hasher`, which is
/// seeded per process): for file names and checksums that outlive the process. Eight bytes at a
/// time, multiply and fold; not for defending against chosen collisions (the cache checks the URL
/// stored in the file).
enum StableHash {
    static func hash(_ bytes: [UInt8], seed: UInt64) -> UInt64 {
        var state = seed ^ 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        bytes.withUnsafeBytes { raw in
            let words = raw.count / 8
            for index in 0..<words {
                let word = raw.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self)
                state = mix(state ^ word)
            }
            var tail: UInt64 = 0
            for index in (words * 8)..<raw.count { tail |= UInt64(raw[index]) << (8 * UInt64(index - words * 8)) }
            state = mix(state ^ tail ^ 0xFF)
        }
        return mix(state)
    }

    @inline(__always)
    private static func mix(_ value: UInt64) -> UInt64 {
        var x = value &* 0xBF58_476D_1CE4_E5B9
        x ^= x >> 31
        x = x &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 29)
    }
}
