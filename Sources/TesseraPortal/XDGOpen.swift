import Foundation
import NodeRuntime

/// The fallback for `OpenURI`: `xdg-open URI`, found on the environment's `PATH` and run with that
/// environment, the URI its one argument (no shell). Never waited for on the caller's thread: the
/// result comes from the process's end, or after `timeout` seconds if it is still running (a
/// browser that `xdg-open` runs in the foreground), which counts as opened.
/// - Thread: any
enum XDGOpen {
    static func executable(in environment: [String: String]) -> String? {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") where !folder.isEmpty {
            let candidate = String(folder) + "/xdg-open"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    static func open(_ uri: String, environment: [String: String], timeout: Double,
                     completion: @escaping @Sendable (Result<OpenURIOutcome, PortalError>) -> Void) {
        guard let executable = executable(in: environment) else {
            return completion(.failure(.fallbackFailed("xdg-open is not on PATH")))
        }
        let finish = Once(completion)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [uri]
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        process.terminationHandler = { process in
            let status = process.terminationStatus
            finish(status == 0 ? .success(.opened(.fallback)) : .failure(.fallbackFailed("xdg-open exited with status \(status)")))
        }
        do {
            try process.run()
        } catch {
            return finish(.failure(.fallbackFailed("xdg-open could not be run: \(error)")))
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0.1, timeout)) {
            finish(.success(.opened(.fallback)))
        }
    }

    /// A completion called at most once, from whichever thread comes first.
    private final class Once: @unchecked Sendable {
        // guarded by lock
        private var completion: (@Sendable (Result<OpenURIOutcome, PortalError>) -> Void)?
        private let lock = NSLock()

        init(_ completion: @escaping @Sendable (Result<OpenURIOutcome, PortalError>) -> Void) { self.completion = completion }

        func callAsFunction(_ result: Result<OpenURIOutcome, PortalError>) {
            lock.lock()
            let taken = completion
            completion = nil
            lock.unlock()
            taken?(result)
        }
    }
}
