import Foundation

/// An avatar file for each row of a chat list, so every row's photo has a path (and a decoded-image
/// cache key) of its own while the photos stay the dataset's: a link per row in a temporary folder,
/// to the photo of the chat the row shows. Rows of chats without a photo get none (they show initials).
///
/// The links are made up front, so making a row reads no folder; `remove()` deletes them.
/// - Thread: any (immutable once made)
final class DistinctAvatarFiles: Sendable {
    struct Missing: Error, CustomStringConvertible {
        let description: String
    }

    /// The folder of the links.
    let folder: URL
    /// The folder's path and the links' common start ("…/avatar-").
    private let prefix: String

    /// Makes a link for each of the first `rows` rows of `data` whose chat has a photo.
    /// - Throws: `Missing` naming a photo the dataset names that is not there; the file system's error
    ///   when the folder or a link cannot be made.
    init(data: ChatData, rows: Int) throws {
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("tessera-avatars-\(ProcessInfo.processInfo.processIdentifier)-\(UInt32.random(in: 0...UInt32.max))")
        prefix = folder.path + "/avatar-"
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        do {
            for row in 0..<max(0, rows) {
                guard let photo = data.chat(forRow: row).avatar else { continue }
                let target = data.photoPath(photo)
                guard FileManager.default.fileExists(atPath: target) else {
                    throw Missing(description: "gallery: missing avatar \(target)")
                }
                try FileManager.default.createSymbolicLink(atPath: path(forRow: row), withDestinationPath: target)
            }
        } catch {
            remove()
            throw error
        }
    }

    /// Row `row`'s avatar file (a link to its chat's photo).
    func path(forRow row: Int) -> String { prefix + String(row) }

    /// Deletes the links and their folder.
    func remove() { try? FileManager.default.removeItem(at: folder) }
}
