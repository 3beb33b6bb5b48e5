public import Logging

/// Where the runtime reports what an app should hear about but that is no error of the caller's: a
/// font that cannot be loaded, a layout that cannot be satisfied. Through swift-log, so an app routes
/// or silences them with `LoggingSystem.bootstrap`; with no bootstrap they go to standard error, as
/// swift-log's default handler writes them. Each kind is reported once per process (and layout
/// diagnostics at most 200 times), so a list of thousands of bad cells cannot flood the log.
/// - Thread: any
public enum TesseraLog {
    /// Fonts: files that cannot be found or loaded, what is used instead (the system's files chosen
    /// through fontconfig are named once each, with the reason), and, as an error, text for which no
    /// font at all can be opened.
    public static let fonts = Logger(label: "tessera.fonts")
    /// Layout: sizes and specs that cannot be satisfied, and what was done instead.
    public static let layout = Logger(label: "tessera.layout")
    /// Images: colour information a decode could not use (a broken, unsupported or mismatched colour
    /// profile or chunk) and how the picture is shown instead; for images by URL, a disk cache that
    /// cannot be made or written, and what is done instead.
    public static let images = Logger(label: "tessera.images")
    /// The application: running headless for want of a display, screenshots written, settings from
    /// the environment that do not parse.
    public static let app = Logger(label: "tessera.app")
    /// Accessibility: the screen reader bridge (AT-SPI over D-Bus) connecting, or why it could not.
    public static let accessibility = Logger(label: "tessera.accessibility")
    /// Appearance: the desktop's settings portal connecting or not, and settings it sent that are not
    /// of the documented type or range (ignored, the fallback used instead).
    public static let appearance = Logger(label: "tessera.appearance")
}
