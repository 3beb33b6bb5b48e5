import CSDL
import XCTest

/// An XDND client message read from SDL's window-system event by the drag filter: by the message
/// types looked up when the window was made, from the event alone (the filter runs inside SDL's
/// event dispatch, where a call into Xlib could wait on the server).
final class XdndMessageTests: XCTestCase {
    private let atoms: [UInt] = [301, 302, 303, 304]

    private func read(type: Int32 = 33, format: Int32 = 32, messageType: UInt, window: UInt = 0x4A0_0007,
                      position: Int = 0, atoms: [UInt]? = nil) -> tessera_xdnd_message? {
        var message = tessera_sdl_syswm_msg()
        message.subsystem = 2
        message.msg.client.type = type
        message.msg.client.format = format
        message.msg.client.window = window
        message.msg.client.message_type = messageType
        message.msg.client.data.2 = position
        return withUnsafeMutablePointer(to: &message) { pointer in
            var event = SDL_Event()
            event.type = SDL_SYSWMEVENT.rawValue
            event.syswm.msg = OpaquePointer(pointer)
            var out = tessera_xdnd_message()
            return tessera_sdl_xdnd_message(&event, atoms ?? self.atoms, &out) != 0 ? out : nil
        }
    }

    func testEachOfTheFourMessagesIsKnownByItsType() {
        XCTAssertEqual(read(messageType: 301)?.kind, 1, "XdndEnter")
        let position = read(messageType: 302, position: (640 << 16) | 480)
        XCTAssertEqual(position?.kind, 2, "XdndPosition")
        XCTAssertEqual(position?.root_x, 640)
        XCTAssertEqual(position?.root_y, 480)
        XCTAssertEqual(position?.window, 0x4A0_0007)
        XCTAssertEqual(read(messageType: 303)?.kind, 3, "XdndLeave")
        XCTAssertEqual(read(messageType: 304)?.kind, 4, "XdndDrop")
    }

    func testOtherMessagesAndTypesNotFoundAreNotDrags() {
        XCTAssertNil(read(messageType: 305), "another client message")
        XCTAssertNil(read(type: 28, messageType: 301), "a PropertyNotify is no client message")
        XCTAssertNil(read(format: 8, messageType: 301), "XDND messages are 32-bit")
        // A display where the names were never made: 0 matches no message, not even one of type 0.
        XCTAssertNil(read(messageType: 0, atoms: [0, 0, 0, 0]))
        var event = SDL_Event()
        event.type = SDL_KEYDOWN.rawValue
        var out = tessera_xdnd_message()
        XCTAssertEqual(tessera_sdl_xdnd_message(&event, atoms, &out), 0, "not a window-system event")
    }
}
