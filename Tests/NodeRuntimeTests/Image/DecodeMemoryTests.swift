import Compositor
import Foundation
import Synchronization
import TestSupport
import XCTest
@testable import NodeRuntime

/// The working-memory bound shared by all decodes running at once.
@MainActor
final class DecodeMemoryTests: XCTestCase {
    func testReservationsNeverPassTheCapacityExceptForOneAlone() async {
        let memory = DecodeMemory(capacity: 100)
        XCTAssertTrue(memory.reserve(60, isCancelled: { false }))
        XCTAssertTrue(memory.reserve(40, isCancelled: { false }))
        XCTAssertEqual(memory.usage.inUse, 100)
        // A third does not fit: it waits, and gives up when cancelled.
        let cancelled = Flag()
        let waiter = Thread.detachNewThreadWaiting { memory.reserve(10, isCancelled: { cancelled.value.load(ordering: .relaxed) }) }
        cancelled.value.store(true, ordering: .relaxed)
        XCTAssertEqual(waiter.value(), false)
        memory.release(60)
        memory.release(40)
        XCTAssertTrue(memory.reserve(1_000, isCancelled: { false }), "one decode alone always runs")
        XCTAssertEqual(memory.usage.peak, 1_000)
        memory.release(1_000)
        XCTAssertEqual(memory.usage.inUse, 0)
    }

    /// Eight threads reserving 30 of 100 bytes over and over: never more than three hold at once.
    func testConcurrentReservationsStayWithinTheCapacity() async {
        let memory = DecodeMemory(capacity: 100)
        let group = DispatchGroup()
        for _ in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for _ in 0..<500 {
                    _ = memory.reserve(30, isCancelled: { false })
                    memory.release(30)
                }
            }
        }
        group.wait()
        XCTAssertLessThanOrEqual(memory.usage.peak, 90, "a fourth 30 never fit beside three")
        XCTAssertGreaterThanOrEqual(memory.usage.peak, 30)
        XCTAssertEqual(memory.usage.inUse, 0)
    }

    /// Eight threads decoding at once under a capacity that fits about two: every decode finishes
    /// with the right picture, and the reserved total never passed the capacity.
    func testConcurrentDecodesShareTheCapacity() async throws {
        let saved = ImageDecoder.concurrentDecodeBytes
        defer { ImageDecoder.concurrentDecodeBytes = saved }
        let bytes = TestImageFiles.png(width: 400, height: 300, colourType: 2, bitDepth: 8) { x, _ in [x < 200 ? 255 : 0, 0, 0] }
        let target = ImageDecoder.Target(width: 40, height: 30, mode: .aspectFit)
        ImageDecoder.concurrentDecodeBytes = 40_000
        let group = DispatchGroup()
        let results = Locked([Int: UInt32]())
        for i in 0..<8 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for _ in 0..<5 {
                    let bitmap = try? ImageDecoder.decode(.data(bytes, name: "p\(i)"), for: target)
                    results.withLock { $0[i] = bitmap?.pixel(x: 5, y: 5) }
                }
            }
        }
        group.wait()
        XCTAssertEqual(results.withLock { $0 }, Dictionary(uniqueKeysWithValues: (0..<8).map { ($0, 0xFFFF_0000) }))
        XCTAssertEqual(ImageDecoder.decodeMemoryUsage.inUse, 0)
    }
}

private final class Flag: Sendable { let value = Atomic<Bool>(false) }

private final class ThreadResult<Value: Sendable>: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var stored: Value?
    func set(_ value: Value) { stored = value; done.signal() }
    func value() -> Value { done.wait(); return stored! }
}

private extension Thread {
    /// Runs `body` on a new thread; the result is read with `value()` (which waits for it).
    static func detachNewThreadWaiting<Value: Sendable>(_ body: @escaping @Sendable () -> Value) -> ThreadResult<Value> {
        let result = ThreadResult<Value>()
        detachNewThread { result.set(body()) }
        return result
    }
}
