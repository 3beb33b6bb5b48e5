import CTessera
import Dispatch
import Foundation
import XCTest
@testable import Compositor
@testable import NodeRuntime
@testable import Tessera
@testable import TesseraPortal

/// The runtime's modules link FoundationEssentials, never Foundation (an app that does not import
/// Foundation itself does not load it, about 6 MB of its memory); what they took from Foundation is
/// built on POSIX threads and libdispatch here, and checked here.
final class FoundationFreeRuntimeTests: XCTestCase {
    /// The modules an app links through `import Tessera`.
    static let runtimeModules = ["Compositor", "NodeRuntime", "AccessibilityBridge", "TesseraDBus", "TesseraPortal", "Tessera"]

    func testNoRuntimeSourceImportsFoundation() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources")
        let importsFoundation = try NSRegularExpression(pattern: #"^\s*(@\w+\s+)*(\w+\s+)?import\s+(struct\s+|class\s+|func\s+)?Foundation(\.|\s*$)"#,
                                                        options: .anchorsMatchLines)
        var checked = 0
        var offenders: [String] = []
        for module in Self.runtimeModules {
            let folder = sources.appendingPathComponent(module)
            let files = try XCTUnwrap(FileManager.default.enumerator(atPath: folder.path)).compactMap { $0 as? String }
            for file in files where file.hasSuffix(".swift") {
                let text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                checked += 1
                if importsFoundation.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)) != nil {
                    offenders.append("\(module)/\(file)")
                }
            }
        }
        XCTAssertGreaterThan(checked, 200, "the runtime's sources were not found under \(sources.path)")
        XCTAssertEqual(offenders, [], "these files import Foundation; import FoundationEssentials (and Dispatch, Glibc)")
    }

    /// An app without Foundation has no run loop: the main queue is drained directly. (A plain test:
    /// it runs on the main thread outside any main-queue item, as an app's event loop does; inside one,
    /// the queue is not drained again.)
    func testTheMainQueueIsDrainedWithoutARunLoop() {
        nonisolated(unsafe) var ran: [Int] = []
        DispatchQueue.main.async { ran.append(1) }
        DispatchQueue.main.async { ran.append(2) }
        // 0: the run loop is not used even though this test process links Foundation.
        XCTAssertEqual(tessera_run_main_queue(0), 0)
        XCTAssertEqual(ran, [1, 2])
        DispatchQueue.main.async { ran.append(3) }
        // With Foundation loaded (as here), one pass of its run loop serves the queue.
        XCTAssertEqual(tessera_run_main_queue(1), 1)
        XCTAssertEqual(ran, [1, 2, 3])
    }

    func testTheMainThreadIsTheProcesssFirst() {
        XCTAssertEqual(PlatformThread.isMain, Thread.isMainThread)
        let answer = Locked<Bool?>(nil)
        let done = DispatchSemaphore(value: 0)
        PlatformThread.detach(name: "tessera.test-thread-with-a-long-name") {
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            answer.withLock { $0 = !PlatformThread.isMain && name == "tessera.test-th\n" }
            done.signal()
        }
        done.wait()
        XCTAssertEqual(answer.withLock { $0 }, true, "a detached thread is not the main one, and is named (15 bytes)")
    }

    /// A name cut at 15 bytes inside a character would become longer than the limit (U+FFFD is three
    /// bytes) and be refused, leaving the thread its creator's name: it is cut by whole characters.
    func testAThreadNameIsCutByWholeCharacters() {
        let seen = Locked<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        PlatformThread.detach(name: "ab日本語テキスト.1") {  // キ spans bytes 14 to 16 (counting from 0)
            seen.withLock { $0 = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "" }
            done.signal()
        }
        done.wait()
        XCTAssertEqual(seen.withLock { $0 }, "ab日本語テ\n")
    }

    func testATimedWaitEndsUnsignalledAndASignalEndsAWait() {
        let condition = PlatformCondition()
        condition.lock()
        XCTAssertFalse(condition.wait(seconds: 0.02), "nobody signals: the wait times out")
        XCTAssertFalse(condition.wait(seconds: 0), "a deadline already past does not wait")
        XCTAssertFalse(condition.wait(seconds: -.infinity))
        condition.unlock()

        let state = ConditionLocked(0)
        PlatformThread.detach(name: "signaller") { state.withLockSignalling { $0 = 7 } }
        XCTAssertEqual(state.wait(until: { $0 == 7 }, then: { $0 }), 7)
        XCTAssertEqual(state.wait(until: { $0 == 8 }, timeout: 0.02, then: { $0 }), nil)
    }

    func testAThreadLocalObjectIsTheThreadsOwnAndGoesWithTheThread() {
        final class Marker: Sendable {}
        let local = ThreadLocalObject<Marker>()
        XCTAssertNil(local.value)
        weak var released: Marker?
        let seen = Locked<(Bool, Bool)?>(nil)
        let started = DispatchSemaphore(value: 0)
        do {
            let marker = Marker()
            released = marker
            PlatformThread.detach(name: "local") { [marker] in
                local.value = marker
                let own = local.value === marker
                local.value = marker  // set again: no extra reference kept
                seen.withLock { $0 = (own, local.value === marker) }
                started.signal()
            }
        }
        started.wait()
        XCTAssertNil(local.value, "another thread's value is not this one's")
        XCTAssertTrue(seen.withLock { $0?.0 == true && $0?.1 == true })
        // The thread's reference is released by the slot's destructor as the thread ends.
        let deadline = Date(timeIntervalSinceNow: 10)
        while released != nil, Date() < deadline { usleep(1000) }
        XCTAssertNil(released, "the thread's object outlived the thread")
    }

    func testFixedPointFormattingMatchesC() {
        XCTAssertEqual(formatFixed(0.5, digits: 3), "0.500")
        XCTAssertEqual(formatFixed(2.25, digits: 1), "2.2")  // halves to even, as printf
        XCTAssertEqual(formatFixed(-1.0 / 3, digits: 2), "-0.33")
        XCTAssertEqual(formatFixed(12.0, digits: 0), "12")
        XCTAssertEqual(formatFixed(.nan, digits: 2), "nan")
        XCTAssertEqual(formatFixed(-.infinity, digits: 2), "-inf")
        XCTAssertEqual(formatFixed(1e300, digits: 30).count, 301 + 1 + 30)
        XCTAssertEqual(formatFixed(1, digits: -4), "1")
        XCTAssertEqual(formatFixed(1, digits: 1000).count, 2 + 30)
    }

    func testTrimmingWhitespace() {
        XCTAssertEqual("  \tdark \u{00A0}".trimmingWhitespace(), "dark")
        XCTAssertEqual(" a b\n".trimmingWhitespace(), "a b\n", "line ends stay unless asked")
        XCTAssertEqual("\n a b \r\n".trimmingWhitespace(newlines: true), "a b")
        XCTAssertEqual("   ".trimmingWhitespace(), "")
        XCTAssertEqual("dark \u{20DD}".trimmingWhitespace(), "dark \u{20DD}", "a combining mark after a space stays")
        XCTAssertEqual("\u{3000}\u{2028}x\u{0085}".trimmingWhitespace(), "\u{2028}x\u{0085}")
        XCTAssertEqual("\u{3000}\u{2028}x\u{0085}".trimmingWhitespace(newlines: true), "x")
        XCTAssertEqual("".trimmingWhitespace(newlines: true), "")
    }

    func testTheFileChooserOrdersNamesAsAPersonReadsThem() {
        let names = ["photo 10.jpg", "Photo 2.jpg", "photo 1.jpg", "b", "A", "a", "photo 02.jpg", "x9", "x10", "x",
                     "Ünïcode", "zebra", "007", "7", "8"]
        XCTAssertEqual(names.sorted(by: naturallyOrdered),
                       ["007", "7", "8", "A", "a", "b", "photo 1.jpg", "Photo 2.jpg", "photo 02.jpg", "photo 10.jpg",
                        "x", "x9", "x10", "zebra", "Ünïcode"])
    }

    func testXdgOpenIsSpawnedWithExactlyItsEnvironmentAndReaped() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("xdg-open-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let record = folder.appendingPathComponent("record").path
        let script = folder.appendingPathComponent("xdg-open").path
        try "#!/bin/sh\nprintf '%s|%s|%s' \"$1\" \"$MARK\" \"$HOME\" > \"$RECORD\"\nread line && exit 9\nexit 3\n"
            .write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let outcome = Locked<Result<OpenURIOutcome, PortalError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        XDGOpen.open("https://example.com/a b", environment: ["PATH": folder.path, "MARK": "é", "RECORD": record],
                     timeout: 60) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success)
        // Standard input is /dev/null (the read fails), so the script exits 3: a failure, reported.
        guard case let .failure(.fallbackFailed(reason))? = outcome.withLock({ $0 }) else {
            return XCTFail("expected the exit status to be reported, got \(String(describing: outcome.withLock { $0 }))")
        }
        XCTAssertEqual(reason, "xdg-open exited with status 3")
        XCTAssertEqual(try String(contentsOfFile: record, encoding: .utf8), "https://example.com/a b|é|",
                       "the URI is one argument; the environment is exactly the one given")
        XCTAssertEqual(Self.zombieChildren(), [], "no child is left unreaped")

        guard case .failure(let spawnFailure) = XDGOpen.spawn("/bin/true", arguments: ["a\0b"], environment: [:]) else {
            return XCTFail("an argument with a NUL byte must be refused")
        }
        XCTAssertTrue(spawnFailure.reason.contains("NUL"))
        guard case .failure = XDGOpen.spawn(folder.appendingPathComponent("missing").path, arguments: [], environment: [:]) else {
            return XCTFail("a missing program must be an error")
        }
    }

    /// The child keeps none of the app's descriptors (even one opened without O_CLOEXEC) and runs
    /// in a process group of its own.
    func testXdgOpensChildHasNoneOfTheAppsDescriptorsAndItsOwnProcessGroup() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("spawn-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let record = folder.appendingPathComponent("record").path
        let inherited = open("/etc/hostname", O_RDONLY)  // no O_CLOEXEC, as a library may open one
        XCTAssertGreaterThanOrEqual(inherited, 3)
        defer { close(inherited) }
        // The shell's own descriptors are listed from a child of it (`ls`), so read them from the
        // shell's: /proc/$$/fd, with the shell's process group.
        let script = "ls /proc/$$/fd | tr '\\n' ' ' > \"$RECORD\"; echo \"| $(cut -d' ' -f5 /proc/$$/stat)\" >> \"$RECORD\""
        guard case let .success(pid) = XDGOpen.spawn("/bin/sh", arguments: ["-c", script],
                                                     environment: ["PATH": "/usr/bin:/bin", "RECORD": record]) else {
            return XCTFail("the shell could not be started")
        }
        var status: Int32 = 0
        XCTAssertEqual(waitpid(pid, &status, 0), pid)
        let text = try String(contentsOfFile: record, encoding: .utf8)
        let parts = text.split(separator: "|")
        XCTAssertEqual(parts.count, 2, text)
        let descriptors = parts[0].split(separator: " ").compactMap { Int($0) }
        XCTAssertFalse(descriptors.contains(Int(inherited)), "the child has the app's descriptor \(inherited): \(text)")
        XCTAssertTrue(descriptors.allSatisfy { $0 <= 3 }, "only 0–2 (and the shell's own for the redirect): \(text)")
        XCTAssertEqual(Int(parts[1].trimmingWhitespace(newlines: true)), Int(pid), "its own process group: \(text)")
    }

    /// The process IDs of this process's children that ended and were not waited for.
    static func zombieChildren() -> [Int] {
        let own = "\(getpid())"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { entry -> Int? in
            guard let pid = Int(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let close = stat.lastIndex(of: ")") else { return nil }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 2 && fields[0] == "Z" && fields[1] == own ? pid : nil
        }
    }
}
