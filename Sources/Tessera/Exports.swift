// `import Tessera` is the one import an app needs: the node runtime, the compositor's values
// (geometry, colours, bitmaps, events), the screen reader bridge and the application entry point.
@_exported import AccessibilityBridge
@_exported import Compositor
@_exported import NodeRuntime
@_exported import TesseraPortal
