// `import Tessera` is the one import an app needs: the node runtime, the compositor's values
// (geometry, colours, bitmaps, events), the screen reader bridge and the application entry point,
// and FoundationEssentials, whose types (`URL`, `Data`, `Date`, `JSONDecoder`…) the API takes. The
// rest of Foundation (formatters, `String(format:)`, locale-aware comparison) is the app's choice:
// `import Foundation` loads it, about 6 MB of memory more.
@_exported import FoundationEssentials
@_exported import AccessibilityBridge
@_exported import Compositor
@_exported import NodeRuntime
@_exported import TesseraPortal
