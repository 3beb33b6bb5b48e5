/// The check behind every contract of Tessera's API: a caller that breaks one (a layer touched off the
/// UI thread, a row index out of range, a draw that reaches a node) stops the process with the
/// contract's message on standard error, in every build.
///
/// Swift's `precondition` keeps its check in optimised builds (`-c release`) but drops the message
/// there: the process traps (SIGILL) without a word. `Contract` fails through `fatalError`, which prints
/// "File.swift:12: Fatal error: MESSAGE" in `-O` builds too, so a broken contract in an app built for
/// release says what was broken. (`-Ounchecked` removes the checks altogether; Tessera is not built so.)
/// - Thread: any
public enum Contract {
    /// Stops the process with `message` unless `condition` holds.
    ///
    /// - Parameters:
    ///   - condition: the contract; evaluated once.
    ///   - message: what was broken, said to the developer; evaluated only when `condition` fails.
    ///   - file: the file where the contract was broken (the caller's by default).
    ///   - line: the line where the contract was broken (the caller's by default).
    /// - Thread: any
    @inline(__always)
    public static func require(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
                               file: StaticString = #fileID, line: UInt = #line) {
        if !condition() { violated(message(), file: file, line: line) }
    }

    /// Stops the process with `message`: a contract that was broken, found where no condition is left
    /// to test (the `default` of a switch that the contract rules out).
    /// - Thread: any
    @inline(never)
    public static func violated(_ message: @autoclosure () -> String,
                                file: StaticString = #fileID, line: UInt = #line) -> Never {
        fatalError(message(), file: file, line: line)
    }
}
