
// The override points of `Node`, each with its thread. They are declared in the class body (Swift only
// lets a class's own body declare `open` members) through this extension of the documentation.
//
// - `init()`                         any thread; never touch the layer here
// - `didLoad()`                      main, once, after the layer exists
// - `layoutSpecThatFits(_:)`         any thread; build the layout, do not touch layers
// - `calculateSizeThatFits(_:)`      any thread; the size of a leaf node
// - `LayoutStyleDefaults`             a class's starting layout style (TextNode: flexShrink 1)
// - `layout()`                       main, after a layout is applied
// - `didEnterPreloadState()` / `didExitPreloadState()`      main
// - `didEnterDisplayState()` / `didExitDisplayState()`      main
// - `didEnterVisibleState()` / `didExitVisibleState()`      main
// - `interfaceStateDidChange(_:from:)`                      main, once per change, after the hooks
// - `touchesBegan/Moved/Ended/Cancelled(_:)`                main
// - `pointerEntered()` / `pointerExited()`                  main, hover with no button down
// - `cursor(at:)`                                           main, the pointer's shape while hovered
