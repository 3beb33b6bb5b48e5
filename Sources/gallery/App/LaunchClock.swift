import Foundation

/// How long ago the process started, from the kernel's record of its start (`/proc/self/stat`, in
/// clock ticks since boot, 10 ms on most kernels) and the time since boot (`CLOCK_BOOTTIME`): it
/// includes the dynamic linker's work before `main`, which a clock started in `main` would miss.
enum LaunchClock {
    /// Milliseconds since the process started; nil where `/proc` does not say.
    static func millisecondsSinceLaunch() -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // Fields after the command name (which may hold spaces), from field 3 on: start time is field 22.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let ticks = Double(fields[19]) else { return nil }
        let hertz = Double(sysconf(Int32(_SC_CLK_TCK)))
        var now = timespec()
        guard hertz > 0, clock_gettime(CLOCK_BOOTTIME, &now) == 0 else { return nil }
        let sinceBoot = Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        return max(0, (sinceBoot - ticks / hertz) * 1000)
    }
}
