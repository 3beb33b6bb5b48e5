import Compositor
import Foundation
import NodeRuntime
import TestSupport
import XCTest
@testable import Tessera

/// `MemoryReport`: the kernel's map of the process summed by owner, and the bitmaps of a window's
/// nodes counted where they are (byte counts, not timings).
@MainActor
final class MemoryReportTests: XCTestCase {
    /// A map with each kind of mapping: the main stack, a thread stack above its guard page, a malloc
    /// arena (read-write below its reserved part, which is no stack), a SysV segment, a font, a
    /// library with its OpenGL neighbour, a data file.
    func testTheMapIsSummedByOwner() {
        let smaps = """
        55d0a0000000-55d0a0100000 r-xp 00000000 fe:00 11 /usr/bin/app
        Size:               1024 kB
        Rss:                 800 kB
        7f0000000000-7f0000001000 ---p 00000000 00:00 0
        Rss:                   0 kB
        7f0000001000-7f0000801000 rw-p 00000000 00:00 0
        Rss:                  48 kB
        7f1000000000-7f1000021000 rw-p 00000000 00:00 0
        Rss:                 132 kB
        7f1000021000-7f1004000000 ---p 00000000 00:00 0
        Rss:                   0 kB
        7f1004000000-7f1004100000 rw-p 00000000 00:00 0
        Rss:                1024 kB
        7f2000000000-7f2000300000 rw-s 00000000 00:01 5 /SYSV00000000 (deleted)
        Rss:                2600 kB
        7f3000000000-7f3000a00000 r--p 00000000 fe:00 21 /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf
        Rss:                 300 kB
        7f4000000000-7f4000100000 r-xp 00000000 fe:00 31 /usr/lib/x86_64-linux-gnu/libSDL2-2.0.so.0.2600.5
        Rss:                1400 kB
        7f4000100000-7f4000110000 r--p 00100000 fe:00 31 /usr/lib/x86_64-linux-gnu/libSDL2-2.0.so.0.2600.5
        Rss:                  64 kB
        7f5000000000-7f5000010000 r--p 00000000 fe:00 41 /usr/share/icu/72.1/icudt72l.dat
        Rss:                  16 kB
        7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]
        Rss:                  40 kB
        """
        var memory = ProcessMemory()
        memory.take(mappings: ProcessMemory.parse(smaps))
        XCTAssertEqual(memory.stackBytes, (48 + 40) * 1024, "the thread stack above its guard page and the main one; not the arena")
        XCTAssertEqual(memory.sysVBytes, 2600 * 1024)
        XCTAssertEqual(memory.fontBytes, 300 * 1024)
        XCTAssertEqual(memory.fontFiles, 1)
        XCTAssertEqual(memory.libraryBytes, 1464 * 1024, "one library, its two mappings")
        XCTAssertEqual(memory.otherFileBytes, (800 + 16) * 1024, "the data file, and an executable that is not this process's")
        XCTAssertFalse(memory.mapsOpenGL)
        XCTAssertEqual(memory.largestFiles.first?.name, "libSDL2-2.0.so.0.2600.5")
        XCTAssertEqual(memory.largestFiles.first?.bytes, 1464 * 1024)

        var withGL = ProcessMemory()
        withGL.take(mappings: ProcessMemory.parse("7f6000000000-7f6000100000 r-xp 00000000 fe:00 51 /usr/lib/x86_64-linux-gnu/libLLVM-15.so.1\nRss: 4 kB\n"))
        XCTAssertTrue(withGL.mapsOpenGL)
        XCTAssertFalse(memory.mapsNetworkLibraries)
        var withCurl = ProcessMemory()
        withCurl.take(mappings: ProcessMemory.parse("7f7000000000-7f7000100000 r-xp 00000000 fe:00 61 /usr/lib/x86_64-linux-gnu/libcurl.so.4.8.0\nRss: 4 kB\n"))
        XCTAssertTrue(withCurl.mapsNetworkLibraries)
    }

    /// libcurl is loaded by the first fetch by URL (not linked): mapped once an image came over HTTP,
    /// and fetched from the fetcher's thread.
    func testTheFirstFetchByURLLoadsLibcurl() async throws {
        let server = try TestHTTPServer()
        defer { server.stop() }
        server.route("/one", [.send(TestHTTPServer.response(body: [1, 2, 3])), .close])
        final class Delegate: ImageFetchDelegate, @unchecked Sendable {
            let ended = DispatchSemaphore(value: 0)
            var body: [UInt8] = []
            func didReceive(_ bytes: UnsafeRawBufferPointer) { body += bytes }
            func didFinish() { ended.signal() }
            func didFail(_ error: NetworkImageError) { ended.signal() }
        }
        let delegate = Delegate()
        let task = CurlImageFetcher().startFetch(ImageFetchRequest(url: server.url("/one")), delegate: delegate)
        XCTAssertEqual(delegate.ended.wait(timeout: .now() + 20), .success)
        withExtendedLifetime(task) {}
        XCTAssertEqual(delegate.body, [1, 2, 3])
        XCTAssertTrue(MemoryReport.measure(windows: []).mapsNetworkLibraries, "libcurl is mapped after a fetch")
    }

    /// Hostile or cut text: no mapping is made up, no number guessed at.
    func testAMapThatIsNotOneGivesNothing() {
        for text in ["", "garbage", "Rss: 12 kB", "zz-yy r--p 0 0 0 /x\nRss: 4 kB", "\u{FFFD}\u{0}-\u{0}",
                     "7f00-7e00 r--p", String(repeating: "-", count: 10_000)] {
            var memory = ProcessMemory()
            memory.take(mappings: ProcessMemory.parse(text))
            XCTAssertEqual(memory.libraryBytes + memory.fontBytes + memory.stackBytes + memory.otherFileBytes + memory.sysVBytes, 0, text)
        }
    }

    /// A text on screen is counted among the bitmaps on screen; removed, its bitmap goes and the
    /// count falls by it. The process's own figures are read and the owners never add up to more
    /// than the anonymous memory they split.
    func testATextOnScreenIsCountedAndItsBitmapGoesWithIt() async throws {
        let root = Node()
        let text = TextNode(String(repeating: "Tessera counts its memory. ", count: 20),
                            attributes: TextAttributes(font: .system(size: 15)))
        text.frame = Rect(x: 0, y: 0, width: 400, height: 300)
        root.addSubnode(text)
        let app = try Application(configuration: .headless(size: Size(width: 400, height: 300)), rootNode: root)
        try app.settle()
        let contents = try XCTUnwrap(text.layerIfLoaded?.contents, "the text is drawn")
        let before = MemoryReport.measure(windows: app.windows, appData: ["fixture": 1234])
        XCTAssertGreaterThanOrEqual(before.bytesByOwner["bitmapsOnScreen"] ?? 0, contents.byteCount)
        XCTAssertEqual(before.bytesByOwner["fixture"], 1234)
        XCTAssertGreaterThan(before.rssBytes, 0)
        XCTAssertGreaterThan(before.anonymousBytes, 0)
        XCTAssertGreaterThan(before.threads, 0)
        XCTAssertGreaterThan(before.bytesByOwner["libraries"] ?? 0, 0)
        XCTAssertFalse(before.mapsOpenGL, "the software renderer under the dummy driver maps no OpenGL library")
        let anonymousOwners = before.owners.filter { $0.kind == .anonymous }.reduce(0) { $0 + $1.bytes }
        // What the owners measured hold is in the anonymous memory the kernel counts (nothing counted twice).
        XCTAssertLessThanOrEqual(anonymousOwners - (before.bytesByOwner["heapOther"] ?? 0) - (before.bytesByOwner["allocatorFree"] ?? 0),
                                 before.anonymousBytes)
        XCTAssertEqual(anonymousOwners, max(before.anonymousBytes, anonymousOwners - (before.bytesByOwner["heapOther"] ?? 0)
                                            - (before.bytesByOwner["allocatorFree"] ?? 0)),
                       "the allocator's free space and the rest of the heap are what the owners leave of the anonymous memory")
        XCTAssertTrue(before.table.contains("bitmaps on screen"), before.table)

        text.removeFromSupernode()
        try app.settle()
        let after = MemoryReport.measure(windows: app.windows)
        XCTAssertLessThanOrEqual(after.bytesByOwner["bitmapsOnScreen"] ?? 0,
                                 (before.bytesByOwner["bitmapsOnScreen"] ?? 0) - contents.byteCount)
        XCTAssertNil(after.bytesByOwner["fixture"])
    }
}
