import FoundationEssentials
import Glibc
import Dispatch
import Compositor
import CTessera
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
        let pid: pid_t
        switch spawn(executable, arguments: [uri], environment: environment) {
        case let .success(spawned): pid = spawned
        case let .failure(reason): return finish(.failure(.fallbackFailed("xdg-open could not be run: \(reason)")))
        }
        // The child is reaped by a thread of its own, so it never stays a zombie, however long it runs.
        PlatformThread.detach(name: "tessera.xdg-open", stackSize: 128 << 10) {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0 {
                guard errno == EINTR else { return finish(.failure(.fallbackFailed("xdg-open could not be waited for"))) }
            }
            // WIFEXITED / WEXITSTATUS, macros Swift does not import.
            let exited = status & 0x7f == 0
            let code = (status >> 8) & 0xff
            finish(exited && code == 0 ? .success(.opened(.fallback))
                   : .failure(.fallbackFailed(exited ? "xdg-open exited with status \(code)"
                                                     : "xdg-open ended by signal \(status & 0x7f)")))
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + max(0.1, timeout)) {
            finish(.success(.opened(.fallback)))
        }
    }

    /// Starts `executable` with `arguments` and exactly `environment`, standard input, output and
    /// error on /dev/null, no other descriptor of the app's, the signal mask and dispositions reset,
    /// in a process group of its own (a Ctrl-C in the app's terminal does not reach the browser it
    /// starts): its process ID, or why not.
    static func spawn(_ executable: String, arguments: [String], environment: [String: String]) -> Result<pid_t, SpawnError> {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        // The app's sockets and files stay the app's (those opened without O_CLOEXEC included).
        guard tessera_spawn_close_from(&actions, 3) == 0 else {
            return .failure(SpawnError(reason: "cannot close the app's descriptors in the child"))
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))

        // Strings with a NUL inside cannot be passed; they are refused rather than cut.
        let argumentStrings = [executable] + arguments
        let environmentStrings = environment.map { $0.key + "=" + $0.value }
        guard !(argumentStrings + environmentStrings).contains(where: { $0.utf8.contains(0) }) else {
            return .failure(SpawnError(reason: "an argument or environment variable holds a NUL byte"))
        }
        let argv = argumentStrings.map { strdup($0) } + [nil]
        let envp = environmentStrings.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard status == 0 else { return .failure(SpawnError(reason: String(cString: strerror(status)))) }
        return .success(pid)
    }

    struct SpawnError: Error, CustomStringConvertible {
        let reason: String
        var description: String { reason }
    }

    /// A completion called at most once, from whichever thread comes first.
    private final class Once: @unchecked Sendable {
        // guarded by lock
        private var completion: (@Sendable (Result<OpenURIOutcome, PortalError>) -> Void)?
        private let lock = PlatformLock()

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
