// TEMPORARY
public enum DebugTimers {
    nonisolated(unsafe) public static var install = 0.0
    nonisolated(unsafe) public static var update = 0.0
    nonisolated(unsafe) public static var release = 0.0
    nonisolated(unsafe) public static var apply = 0.0
    nonisolated(unsafe) public static var place = 0.0
    nonisolated(unsafe) public static var transition = 0.0
    nonisolated(unsafe) public static var distance = 0.0
    public static func reset() { install = 0; update = 0; release = 0; apply = 0; place = 0; transition = 0; distance = 0 }
    public static var summary: String { "install \(install) update \(update) release \(release) apply \(apply) place \(place) transition \(transition) distance \(distance)" }
}
