public import NodeRuntime

extension Application {
    /// The system is short of memory: every window lets go of what it can rebuild without changing
    /// what it shows (`NodeHost.releaseMemory(for:)`: the image and text layout caches at every level,
    /// the rows lists drew ahead of the scroll from `medium` up), said once per warning in
    /// `TesseraLog.app`, the allocator's free pages go back to the system (`AllocatorTrim`), then
    /// `onLowMemory` lets the app go further. Called for the desktop's memory
    /// monitor's warnings; an app that hears of pressure elsewhere calls it too.
    /// - Thread: main
    public func lowMemoryWarning(_ level: MemoryWarningLevel) {
        NodeHost.releaseMemory(for: level)
        // What the caches let go goes back to the system, not only to the allocator.
        AllocatorTrim.start()
        TesseraLog.app.info("the desktop warns that memory is short (\(level)): caches emptied\(level >= .medium ? ", lists drawn to their minimum ranges" : "")")
        onLowMemory?(level)
    }
}
