import Compositor
import Foundation
import TestSupport
import XCTest
@testable import NodeRuntime
#if canImport(Glibc)
import Glibc
#endif

/// Paths that are not regular files (a directory, a named pipe, a device, a socket) are refused before
/// they are opened, with an error that says what they are: opening a named pipe for reading would wait
/// for a writer forever, and a directory's "size" is nonsense.
@MainActor
final class ImageFileKindTests: XCTestCase {
    private var time = 0.0
    private let folder = GoldenImage.repositoryRoot.appendingPathComponent(".test-output/image-file-kinds")

    override func setUpWithError() throws {
        try? FileManager.default.removeItem(at: folder)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDown() {
        MainActor.assumeIsolated {
            Runtime.shared.scheduler.waitUntilIdle()
            Runtime.shared.mainQueue.drain()
        }
        try? FileManager.default.removeItem(at: folder)
    }

    private let target = ImageDecoder.Target(width: 40, height: 40, mode: .aspectFill)

    /// A directory named like an image.
    private func makeDirectory() throws -> String {
        let path = folder.appendingPathComponent("photo.png").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A named pipe (FIFO) named like an image.
    private func makeFIFO() throws -> String {
        let path = folder.appendingPathComponent("pipe.jpg").path
        guard mkfifo(path, 0o600) == 0 else { throw XCTSkip("mkfifo failed (errno \(errno))") }
        return path
    }

    /// A listening Unix-domain socket named like an image; closed by the caller.
    private func makeSocket() throws -> (path: String, descriptor: Int32) {
        let path = folder.appendingPathComponent("socket.gif").path
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw XCTSkip("socket failed (errno \(errno))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw XCTSkip("socket path too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in bytes.enumerated() { raw[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            close(descriptor)
            throw XCTSkip("bind failed (errno \(errno))")
        }
        return (path, descriptor)
    }

    /// Opens `fifo` for writing once the deadline passes: a reader blocked in `open` (the failure
    /// this test guards against) is released, so a regression fails the test instead of hanging it.
    private final class FIFORescue: @unchecked Sendable {
        private let lock = NSLock()
        private var isDone = false
        private(set) var fired = false

        init(fifo: String, after seconds: Double) {
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                lock.lock()
                defer { lock.unlock() }
                guard !isDone else { return }
                fired = true
                let descriptor = open(fifo, O_WRONLY | O_NONBLOCK)
                if descriptor >= 0 { close(descriptor) }
            }
        }

        func finish() -> Bool {
            lock.lock()
            defer { lock.unlock() }
            isDone = true
            return fired
        }
    }

    /// The error `decode(_:for:)` throws for `path`.
    private func decodeError(_ path: String, file: StaticString = #filePath, line: UInt = #line) -> ImageError? {
        do {
            _ = try ImageDecoder.decode(.file(path), for: target)
            XCTFail("\(path) decoded", file: file, line: line)
            return nil
        } catch let error as ImageError {
            return error
        } catch {
            XCTFail("\(path): \(error) is not an ImageError", file: file, line: line)
            return nil
        }
    }

    func testADirectoryIsRefusedAsADirectory() async throws {
        let path = try makeDirectory()
        let error = try XCTUnwrap(decodeError(path))
        XCTAssertEqual(error, .notARegularFile(path, kind: "a directory"))
        XCTAssertEqual(error.description, "\(path): a directory, not a file")
        XCTAssertFalse(error.description.contains("bytes is over"), "no nonsense size: \(error)")
        // The natural-size entry point goes through the same door.
        XCTAssertThrowsError(try ImageDecoder.decode(.file(path))) { error in
            XCTAssertEqual(error as? ImageError, .notARegularFile(path, kind: "a directory"))
        }
    }

    func testANamedPipeIsRefusedWithoutWaitingForAWriter() async throws {
        let path = try makeFIFO()
        let rescue = FIFORescue(fifo: path, after: 10)
        let error = decodeError(path)
        XCTAssertFalse(rescue.finish(), "the decode blocked opening the pipe")
        XCTAssertEqual(error, .notARegularFile(path, kind: "a named pipe (FIFO)"))
        XCTAssertEqual(error?.description, "\(path): a named pipe (FIFO), not a file")
    }

    /// The natural-size header read, which an image node measures with, goes through the same door:
    /// called directly, and from a node measured off the UI thread.
    func testTheNaturalSizeReadRefusesAPipeWithoutWaitingForAWriter() async throws {
        let path = try makeFIFO()
        let rescue = FIFORescue(fifo: path, after: 10)
        XCTAssertThrowsError(try ImageDecoder.naturalPixelSize(of: .file(path))) { error in
            XCTAssertEqual(error as? ImageError, .notARegularFile(path, kind: "a named pipe (FIFO)"))
        }
        let node = ImageNode()
        node.source = .file(path)
        let measured = await Task.detached { node.calculateSizeThatFits(Size(width: 100, height: 100)) }.value
        XCTAssertEqual(measured, .zero, "an unreadable header measures as zero")
        XCTAssertFalse(rescue.finish(), "the header read blocked opening the pipe")
    }

    func testADeviceAndASocketAreRefusedByKind() async throws {
        XCTAssertEqual(decodeError("/dev/null"), .notARegularFile("/dev/null", kind: "a character device"))
        let socket = try makeSocket()
        defer { close(socket.descriptor) }
        XCTAssertEqual(decodeError(socket.path), .notARegularFile(socket.path, kind: "a socket"))
    }

    func testASymbolicLinkToAFileStillDecodes() async throws {
        let photo = GoldenImage.repositoryRoot.appendingPathComponent("Assets/photos/horse.png").path
        let link = folder.appendingPathComponent("link.png").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: photo)
        let bitmap = try XCTUnwrap(try ImageDecoder.decode(.file(link), for: target))
        XCTAssertGreaterThan(bitmap.width, 0)
    }

    /// An image node given a named pipe or a directory ends in `.failed` with that reason and draws
    /// its error placeholder; no worker is left waiting on the pipe.
    func testAnImageNodeFailsOnAPipeOrADirectoryWithoutHanging() async throws {
        let fifo = try makeFIFO()
        let directory = try makeDirectory()
        let rescue = FIFORescue(fifo: fifo, after: 10)
        let (host, _) = makeHost()
        let root = Node()
        let nodes = [fifo, directory].map { path -> ImageNode in
            let node = ImageNode()
            node.source = .file(path)
            node.frame = Rect(x: 0, y: 0, width: 40, height: 40)
            root.addSubnode(node)
            return node
        }
        host.setRootNode(root)
        settle(host, time: &time)
        XCTAssertFalse(rescue.finish(), "a worker blocked opening the pipe")
        XCTAssertEqual(nodes[0].loadState, .failed(.notARegularFile(fifo, kind: "a named pipe (FIFO)")))
        XCTAssertEqual(nodes[1].loadState, .failed(.notARegularFile(directory, kind: "a directory")))
        for node in nodes {
            XCTAssertEqual(centreColor(node.layer).map { $0 != .clear }, true, "the error placeholder is drawn")
        }
    }
}
