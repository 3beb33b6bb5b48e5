import Foundation
import TestSupport
import XCTest

/// The XWD reader the window tests read the X server's screen with: colours come out as the masks
/// in the dump say.
final class XWDTests: XCTestCase {
    /// A 2×1 ZPixmap dump, 32 bits a pixel, least significant byte first, masks as Xvfb writes them.
    private func dump(_ pixels: [UInt32]) -> [UInt8] {
        var fields = [Int](repeating: 0, count: 25)
        let name: [UInt8] = Array("t\0".utf8)
        fields[0] = 100 + name.count          // header size
        fields[1] = 7                         // version
        fields[2] = 2                         // ZPixmap
        fields[3] = 24                        // depth
        fields[4] = pixels.count              // width
        fields[5] = 1                         // height
        fields[7] = 0                         // byte order: LSB first
        fields[11] = 32                       // bits per pixel
        fields[12] = pixels.count * 4         // bytes per line
        fields[13] = 4                        // visual class: TrueColor
        fields[14] = 0xFF0000                 // red mask
        fields[15] = 0x00FF00                 // green mask
        fields[16] = 0x0000FF                 // blue mask
        fields[17] = 8                        // bits per RGB
        fields[19] = 0                        // colours
        var bytes: [UInt8] = []
        for field in fields { bytes += [UInt8(field >> 24 & 0xFF), UInt8(field >> 16 & 0xFF), UInt8(field >> 8 & 0xFF), UInt8(field & 0xFF)] }
        bytes += name
        for pixel in pixels { bytes += [UInt8(pixel & 0xFF), UInt8(pixel >> 8 & 0xFF), UInt8(pixel >> 16 & 0xFF), 0] }
        return bytes
    }

    func testColoursFollowTheMasks() throws {
        let shot = try XCTUnwrap(Xvfb.parseXWD(dump([0xFFFFFF, 0x0000FF, 0x123456])))
        XCTAssertEqual(shot.width, 3)
        XCTAssertEqual(shot.pixels, [0xFFFF_FFFF, 0xFF00_00FF, 0xFF12_3456])
    }
}
