import Compositor
import CSDL
import FoundationEssentials
import Glibc
import Dispatch
import NodeRuntime

/// Where an application's memory is: the process's resident set as the kernel counts it
/// (`/proc/self/status`, `/proc/self/smaps`), split by what holds it, so that a megabyte can be
/// followed to its owner.
///
/// Owners measured by Tessera itself (`Owner.kind` says which memory they are in):
/// - bitmaps, by where they are: the contents of nodes on screen, of nodes in the display range
///   (drawn ahead, not visible), decoded images in the image cache, and every other live bitmap (in
///   flight, retained by lists and controllers, animation frames) — all anonymous memory;
/// - textures the windows' renderers hold (in the process's memory with the software renderer and
///   with Mesa's llvmpipe);
/// - the text layout cache;
/// - what the app says it holds (`appData`).
///
/// Owners read from the kernel's map of the process: thread stacks (anonymous regions above a guard
/// page, and the main thread's), X11 shared-memory frames (SysV segments), font files (mapped, only
/// the pages glyphs come from resident), the libraries' code and data by file, and the rest of the
/// anonymous memory (the allocator's heap: nodes, strings, layouts, caches Tessera does not measure,
/// such as FreeType's and SDL_ttf's glyph caches).
/// - Thread: any (a value)
public struct MemoryReport: Codable, Sendable {
    /// One owner of memory.
    /// - Thread: any (a value)
    public struct Owner: Codable, Sendable, Equatable {
        /// What memory it is in.
        public enum Kind: String, Codable, Sendable {
            /// Private memory of the process (heap, bitmaps, stacks): `anonymousBytes` counts it.
            case anonymous
            /// Pages of a file (libraries, fonts), shared with other processes that map it.
            case file
            /// Memory shared with the window system (X11's shared-memory frames).
            case shared
        }
        /// A stable key for JSON readers ("bitmapsOnScreen", "threadStacks").
        public var key: String
        /// What a person reads ("bitmaps on screen").
        public var name: String
        public var bytes: Int
        public var kind: Kind
        /// How it was counted, or what it holds.
        public var detail: String
    }

    /// Resident memory of the process (`VmRSS`).
    public var rssBytes: Int
    /// Resident anonymous memory (`RssAnon`): what the process alone holds.
    public var anonymousBytes: Int
    /// Resident file pages (`RssFile`).
    public var fileBytes: Int
    /// Resident shared memory (`RssShmem`).
    public var sharedMemoryBytes: Int
    /// The owners, largest first within each kind.
    public var owners: [Owner]
    /// The ten files with the most resident pages (libraries, fonts, data files).
    public var largestFiles: [Owner]
    /// Threads of the process.
    public var threads: Int
    /// True when the OpenGL libraries (libGL, Mesa's drivers, LLVM) are mapped.
    public var mapsOpenGL: Bool
    /// True when libcurl (and the TLS, HTTP/2 and other libraries it brings) is mapped: loaded by the
    /// first image fetched by URL, never by an app that fetches none.
    public var mapsNetworkLibraries: Bool

    /// Each owner's bytes by key (what `--json` readers look up).
    public var bytesByOwner: [String: Int] { Dictionary(owners.map { ($0.key, $0.bytes) }, uniquingKeysWith: ProcessMemory.sum) }

    /// The report as a table for a terminal.
    public var table: String {
        func megabytes(_ bytes: Int) -> String { formatFixed(Double(bytes) / 1_048_576, digits: 1) + " MB" }
        func column(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        func figure(_ bytes: Int) -> String {
            let text = megabytes(bytes)
            return String(repeating: " ", count: max(0, 10 - text.count)) + text
        }
        var lines = ["resident \(megabytes(rssBytes)): anonymous "
                     + megabytes(anonymousBytes) + ", files "
                     + megabytes(fileBytes) + ", shared "
                     + megabytes(sharedMemoryBytes)
                     + "; \(threads) threads" + (mapsOpenGL ? "; OpenGL libraries mapped" : "; no OpenGL library mapped")
                     + (mapsNetworkLibraries ? "; libcurl mapped" : "")]
        for kind in [Owner.Kind.anonymous, .shared, .file] {
            lines.append("  \(kind.rawValue):")
            for owner in owners where owner.kind == kind {
                lines.append("    " + column(owner.name, 34) + figure(owner.bytes)
                             + "   " + owner.detail)
            }
        }
        lines.append("  largest files:")
        for file in largestFiles {
            lines.append("    " + column(file.name, 34) + figure(file.bytes))
        }
        return lines.joined(separator: "\n")
    }
}

extension MemoryReport {
    /// The process's resident and anonymous bytes now (`VmRSS`, `RssAnon`): the two figures a
    /// frame-rate overlay shows, without the walk of `measure`.
    /// - Thread: any
    public static func processFigures() -> (residentBytes: Int, anonymousBytes: Int) {
        let memory = ProcessMemory.readStatus()
        return (memory.rssBytes, memory.anonymousBytes)
    }

    /// The report for this process, with the windows' nodes and renderers of `windows` (each
    /// window's tree, its overlays' included) and what the app says it holds (`appData`: a key and
    /// a number of bytes, e.g. `["chatDataset": 1_200_000]`).
    /// - Thread: main
    @MainActor
    public static func measure(windows: [Application.Window], appData: [String: Int] = [:]) -> MemoryReport {
        // Bitmaps by where their nodes are; a bitmap shown twice (one identity) counts once.
        var seen = Set<BitmapIdentity>()
        var onScreen = 0, displayRange = 0
        func visit(_ node: Node) {
            if let contents = node.layerIfLoaded?.contents, seen.insert(contents.identity).inserted {
                if node.interfaceState.contains(.visible) { onScreen += contents.byteCount } else { displayRange += contents.byteCount }
            }
            for subnode in node.subnodes { visit(subnode) }
            // A list's rows are its own, not subnodes.
            if let list = node as? ListNode {
                for row in list.rowNodes where row.supernode !== list { visit(row) }
            }
        }
        var textures = 0
        for window in windows {
            if let root = window.host.rootNode { visit(root) }
            for overlay in window.host.overlays { visit(overlay.content) }
            textures += window.compositor.liveTextureBytes
        }
        let images = ImageCache.shared.byteCount
        let live = Bitmap.liveByteCount
        let layouts = TextLayoutCache.shared.statistics.bytes

        var report = ProcessMemory.read()
        var owners: [Owner] = [
            Owner(key: "bitmapsOnScreen", name: "bitmaps on screen", bytes: onScreen, kind: .anonymous,
                  detail: "contents of visible nodes"),
            Owner(key: "bitmapsDisplayRange", name: "bitmaps in the display range", bytes: displayRange, kind: .anonymous,
                  detail: "drawn ahead of the scroll, not visible"),
            Owner(key: "decodedImages", name: "decoded images (image cache)", bytes: images, kind: .anonymous,
                  detail: "ImageCache.shared, budget \(ImageCache.shared.budgetBytes >> 20) MB"),
            Owner(key: "bitmapsRetained", name: "other live bitmaps", bytes: max(0, live - onScreen - displayRange - images),
                  kind: .anonymous, detail: "in flight, retained rows and screens, animation frames"),
            Owner(key: "textures", name: "textures", bytes: textures, kind: .anonymous,
                  detail: "the renderers' (in this process for software and llvmpipe)"),
            Owner(key: "textLayouts", name: "text layout cache", bytes: layouts, kind: .anonymous,
                  detail: "TextLayoutCache.shared, \(TextLayoutCache.shared.statistics.count) layouts"),
            Owner(key: "threadStacks", name: "thread stacks", bytes: report.stackBytes, kind: .anonymous,
                  detail: "\(report.threads) threads")
        ]
        for (key, bytes) in appData.sorted(by: { $0.key < $1.key }) {
            owners.append(Owner(key: key, name: "app: \(key)", bytes: max(0, bytes), kind: .anonymous, detail: "as the app counts it"))
        }
        let counted = owners.reduce(0) { ProcessMemory.sum($0, $1.bytes) }
        // What is left: the heap the allocator has handed out besides the owners above (which live
        // in it: bitmaps, textures, layouts, the app's data), then its free chunks as far as they
        // fit (pages given back by a trim are not resident, yet still counted free), then the rest.
        let unaccounted = max(0, report.anonymousBytes - counted)
        let inHeap = ([onScreen, displayRange, images, max(0, live - onScreen - displayRange - images), textures, layouts]
                      + appData.values.map { max(0, $0) }).reduce(0, ProcessMemory.sum)
        var handedOut = 0, free = 0
        tessera_malloc_statistics(&handedOut, &free)
        let heapInUse = min(unaccounted, max(0, Int(clamping: handedOut) - inHeap))
        let allocatorFree = min(unaccounted - heapInUse, Int(clamping: free))
        owners.append(Owner(key: "allocatorFree", name: "allocator's free space", bytes: allocatorFree, kind: .anonymous,
                            detail: "freed memory the C allocator keeps for reuse (resident at most this)"))
        owners.append(Owner(key: "heapOther", name: "heap and other anonymous", bytes: unaccounted - allocatorFree,
                            kind: .anonymous, detail: "nodes, strings, layouts, glyph caches"))
        owners.append(Owner(key: "sharedFrames", name: "window system shared memory", bytes: report.sysVBytes, kind: .shared,
                            detail: "X11 shared-memory frames (software presentation)"))
        owners.append(Owner(key: "fontFiles", name: "font files (mapped)", bytes: report.fontBytes, kind: .file,
                            detail: "\(report.fontFiles) files; resident pages only"))
        owners.append(Owner(key: "libraries", name: "libraries and the executable", bytes: report.libraryBytes, kind: .file,
                            detail: "\(report.libraries) files"))
        owners.append(Owner(key: "otherFiles", name: "other mapped files", bytes: report.otherFileBytes, kind: .file,
                            detail: "ICU data, locale archive, caches"))
        report.owners = owners
        return MemoryReport(rssBytes: report.rssBytes, anonymousBytes: report.anonymousBytes, fileBytes: report.fileBytes,
                            sharedMemoryBytes: report.sharedMemoryBytes, owners: owners, largestFiles: report.largestFiles,
                            threads: report.threads, mapsOpenGL: report.mapsOpenGL,
                            mapsNetworkLibraries: report.mapsNetworkLibraries)
    }
}

/// What the kernel says of the process's memory: `/proc/self/status` and `/proc/self/smaps`, summed
/// by mapping. (any thread)
struct ProcessMemory {
    var rssBytes = 0, anonymousBytes = 0, fileBytes = 0, sharedMemoryBytes = 0
    var stackBytes = 0, sysVBytes = 0, fontBytes = 0, libraryBytes = 0, otherFileBytes = 0
    var fontFiles = 0, libraries = 0, threads = 0
    var mapsOpenGL = false
    var mapsNetworkLibraries = false
    var largestFiles: [MemoryReport.Owner] = []
    var owners: [MemoryReport.Owner] = []

    /// One mapping of `/proc/self/smaps`.
    struct Mapping {
        var start: UInt64, end: UInt64
        var permissions: Substring
        var path: Substring
        var rss = 0
    }

    static func read() -> ProcessMemory {
        var memory = readStatus()
        if let smaps = readWhole("/proc/self/smaps") {
            memory.take(mappings: parse(smaps))
        }
        return memory
    }

    /// The figures of `/proc/self/status` alone.
    static func readStatus() -> ProcessMemory {
        var memory = ProcessMemory()
        if let status = readWhole("/proc/self/status") { memory.take(status: status) }
        return memory
    }

    /// A file of `/proc` read to its end (they report a size of 0, so it is read until a read returns
    /// nothing), or nil.
    /// Takes the resident figures and the thread count from `/proc/self/status`'s text.
    mutating func take(status: String) {
        for line in status.split(separator: "\n") {
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard parts.count >= 2, let count = Int(parts[1]), count >= 0 else { continue }
            let kilobytes = Self.bytes(kilobytes: parts[1])
            switch parts[0] {
            case "VmRSS:": rssBytes = kilobytes
            case "RssAnon:": anonymousBytes = kilobytes
            case "RssFile:": fileBytes = kilobytes
            case "RssShmem:": sharedMemoryBytes = kilobytes
            case "Threads:": threads = count
            default: break
            }
        }
    }

    /// The most bytes one figure of `/proc` is taken as (a petabyte): a figure over it, or one that
    /// is no count, is taken as 0, so that no sum of figures overflows.
    static let largestFigure = 1 << 50

    /// `text`, a count of kilobytes, in bytes; 0 for a figure that is no count or over `largestFigure`.
    static func bytes(kilobytes text: Substring) -> Int {
        guard let kilobytes = Int(text), kilobytes >= 0, kilobytes <= largestFigure / 1024 else { return 0 }
        return kilobytes * 1024
    }

    /// `a + b`, or `Int.max` where that overflows (hostile figures, an app's own).
    static func sum(_ a: Int, _ b: Int) -> Int {
        let (total, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b < 0 ? Int.min : Int.max) : total
    }

    static func readWhole(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The mappings of an smaps text, with their resident bytes.
    static func parse(_ smaps: String) -> [Mapping] {
        var mappings: [Mapping] = []
        // Whether the last header read was a mapping's (its Rss lines are its own).
        var takesRss = false
        for line in smaps.split(separator: "\n") {
            if line.hasPrefix("Rss:") {
                let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                if takesRss, parts.count >= 2 { mappings[mappings.count - 1].rss = bytes(kilobytes: parts[1]) }
                continue
            }
            // A mapping's header: "start-end perms offset dev inode [path]".
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count >= 5, let dash = fields[0].firstIndex(of: "-") else { continue }
            // A header that is not a mapping's (or one ending before it starts): its lines go to none.
            guard let start = UInt64(fields[0][..<dash], radix: 16),
                  let end = UInt64(fields[0][fields[0].index(after: dash)...], radix: 16), start <= end else {
                takesRss = false
                continue
            }
            let path = fields.count == 6 ? Substring(fields[5].drop { $0 == " " }) : ""
            mappings.append(Mapping(start: start, end: end, permissions: fields[1], path: path))
            takesRss = true
        }
        return mappings
    }

    mutating func take(mappings: [Mapping]) {
        var files: [Substring: Int] = [:]
        for (index, mapping) in mappings.enumerated() {
            let path = mapping.path
            if path == "[stack]" {
                stackBytes = Self.sum(stackBytes, mapping.rss)
            } else if path.isEmpty {
                if index > 0, mapping.permissions.hasPrefix("rw"), mappings[index - 1].path.isEmpty,
                   mappings[index - 1].permissions.hasPrefix("---"), mappings[index - 1].end == mapping.start,
                   mappings[index - 1].end - mappings[index - 1].start <= 64 * 1024 {
                    stackBytes = Self.sum(stackBytes, mapping.rss)
                }
            } else if path.hasPrefix("/SYSV") {
                sysVBytes = Self.sum(sysVBytes, mapping.rss)
            } else if path.hasPrefix("/") {
                files[path] = Self.sum(files[path] ?? 0, mapping.rss)
            }
        }
        let fontExtensions = [".ttf", ".otf", ".ttc", ".otc", ".pfb", ".woff", ".woff2"]
        for (path, bytes) in files {
            let lowercased = path.lowercased()
            let name = path.split(separator: "/").last.map(String.init) ?? String(path)
            if ["libGL", "libEGL", "libGLX", "_dri.so", "libLLVM", "libgallium", "libglapi"].contains(where: { name.contains($0) }) {
                mapsOpenGL = true
            }
            if name.hasPrefix("libcurl") { mapsNetworkLibraries = true }
            if fontExtensions.contains(where: { lowercased.hasSuffix($0) }) {
                fontBytes = Self.sum(fontBytes, bytes)
                fontFiles += 1
            } else if name.contains(".so") || isExecutable(path) {
                libraryBytes = Self.sum(libraryBytes, bytes)
                libraries += 1
            } else {
                otherFileBytes = Self.sum(otherFileBytes, bytes)
            }
        }
        largestFiles = files.sorted { $0.value > $1.value }.prefix(10).map {
            MemoryReport.Owner(key: String($0.key), name: $0.key.split(separator: "/").last.map(String.init) ?? String($0.key),
                               bytes: $0.value, kind: .file, detail: String($0.key))
        }
    }

    private func isExecutable(_ path: Substring) -> Bool {
        CommandLine.arguments.first.map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path == path } ?? false
    }
}
