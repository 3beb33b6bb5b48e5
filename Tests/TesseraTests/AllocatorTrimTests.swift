import Compositor
import Foundation
import NodeRuntime
import TestSupport
import XCTest
@testable import Tessera

/// The C allocator's free pages go back to the system when the app comes to rest after frames, at
/// most once per `AllocatorTrim.interval`, and after a memory warning; at rest with no frame since,
/// nothing is asked.
@MainActor
final class AllocatorTrimTests: XCTestCase {
    /// Resident bytes of this process (`/proc/self/statm`).
    private func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
    }

    /// 32 MiB freed in 32 KiB holes between blocks still in use: the allocator keeps the pages (no
    /// free chunk reaches the top of its heap), resident, until a trim. Returns the blocks kept.
    private func fragmentTheHeap() -> [UnsafeMutableRawPointer] {
        let size = 32 * 1024
        var blocks: [UnsafeMutableRawPointer] = []
        blocks.reserveCapacity(2048)
        for _ in 0..<2048 {
            let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
            block.initializeMemory(as: UInt8.self, repeating: 0xA5, count: size)
            blocks.append(block)
        }
        var kept: [UnsafeMutableRawPointer] = []
        for (index, block) in blocks.enumerated() {
            if index % 2 == 0 { block.deallocate() } else { kept.append(block) }
        }
        return kept
    }

    func testComingToRestAfterFramesGivesTheFreePagesBack() async throws {
        if TestEnvironment.isSanitized { throw XCTSkip("the sanitizers' allocators replace glibc's: nothing to trim") }
        let node = Node()
        node.backgroundColor = Color(rgb: 0x336699)
        let app = try Application(configuration: .headless(size: Size(width: 120, height: 90)), rootNode: node)
        defer { app.close() }
        try app.settle()
        // Whatever an earlier app asked for has finished: the next trim starts when asked.
        AllocatorTrim.waitUntilIdle()
        let trims = AllocatorTrim.finishedCount
        let kept = fragmentTheHeap()
        defer { for block in kept { block.deallocate() } }
        XCTAssertGreaterThanOrEqual(AllocatorTrim.freeBytes, 32 << 20, "the holes are free chunks the allocator keeps")
        let before = residentBytes()
        let reportBefore = MemoryReport.measure(windows: app.windows).bytesByOwner["allocatorFree"] ?? 0
        XCTAssertGreaterThanOrEqual(reportBefore, 24 << 20, "the report finds the free chunks resident")

        // Frames ran since the app's start: coming to rest, the loop asks for a trim.
        app.runEventLoop(forSeconds: 0.3)
        AllocatorTrim.waitUntilIdle()
        XCTAssertEqual(AllocatorTrim.finishedCount, trims + 1, "one trim at rest")
        let after = residentBytes()
        XCTAssertGreaterThanOrEqual(before - after, 24 << 20,
                                    "the holes' pages went back: resident \(before >> 20) MB before, \(after >> 20) MB after")
        let reportAfter = MemoryReport.measure(windows: app.windows).bytesByOwner["allocatorFree"] ?? 0
        XCTAssertLessThanOrEqual(reportAfter, reportBefore - (16 << 20),
                                 "the report's free space shrinks with the pages given back (\(reportBefore >> 20) → \(reportAfter >> 20) MB)")

        // At rest again with no frame since: nothing is asked.
        app.runEventLoop(forSeconds: 0.3)
        AllocatorTrim.waitUntilIdle()
        XCTAssertEqual(AllocatorTrim.finishedCount, trims + 1, "no frame since the trim: none again")
        // A frame, and rest within the interval: none either.
        node.backgroundColor = Color(rgb: 0x993366)
        app.runEventLoop(forSeconds: 0.3)
        AllocatorTrim.waitUntilIdle()
        XCTAssertGreaterThan(app.frameCount, 0)
        XCTAssertEqual(AllocatorTrim.finishedCount, trims + 1, "within \(AllocatorTrim.interval) s of the last: none")
    }

    func testAMemoryWarningTrimsAfterTheCachesLetGo() async throws {
        let app = try Application(configuration: .headless(size: Size(width: 120, height: 90)), rootNode: Node())
        defer { app.close() }
        AllocatorTrim.waitUntilIdle()
        let trims = AllocatorTrim.finishedCount
        app.lowMemoryWarning(.low)
        AllocatorTrim.waitUntilIdle()
        XCTAssertEqual(AllocatorTrim.finishedCount, trims + 1)
    }
}
