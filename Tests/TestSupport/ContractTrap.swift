public import Testing

/// Checks on the child process of an exit test that broke a contract: the trap must be the one the
/// test aimed at, recognised by its message on standard error.
///
/// Tessera's contracts fail through `Contract.require` / `Contract.violated` (over `fatalError`), which
/// print "Module/File.swift:12: Fatal error: MESSAGE" in every build, optimised (`-c release`) ones
/// included, so the message is looked for whatever the build.
/// - Thread: any
public enum ContractTrap {
    /// Expects the standard error of `result` (observed with `\.standardErrorContent`) to hold `message`.
    ///
    /// - Parameters:
    ///   - result: what `#expect(processExitsWith: .failure, observing: [\.standardErrorContent])`
    ///     returned; nil (the exit test itself failed, already reported) checks nothing.
    ///   - message: text of the contract's message, exactly as the source writes it.
    public static func expectMessage(_ result: ExitTest.Result?, _ message: String,
                                     sourceLocation: SourceLocation = #_sourceLocation) {
        guard let result else { return }
        let standardError = String(decoding: result.standardErrorContent, as: UTF8.self)
        // The runtime's report line, without the backtrace that follows it.
        let report = standardError.split(separator: "\n").first { $0.contains("failed: ") || $0.contains("Fatal error: ") }
        #expect(standardError.contains(message), "the trap's report: \(report.map(String.init) ?? standardError)",
                sourceLocation: sourceLocation)
    }
}

/// Calls `body`, which the compiler knows must run on the main actor, on the calling thread without
/// the compiler's check: for exit tests that break the threading contract on purpose, to show that
/// the run-time check behind the compiler's traps with its message. Nothing else may use it.
/// - Thread: any (that is the point)
public func callIgnoringIsolation(_ body: @MainActor () -> Void) {
    withoutActuallyEscaping(body) { isolated in
        let unchecked = unsafeBitCast(isolated, to: (() -> Void).self)
        unchecked()
    }
}
