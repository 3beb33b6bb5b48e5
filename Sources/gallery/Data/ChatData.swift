import Foundation

/// The gallery's chat history, read from `Assets/data/chats.json`.
/// - Thread: any (immutable values)
struct ChatData: Sendable {
    struct Message: Sendable, Codable {
        var id: Int
        var out: Bool
        var author: String
        var text: String
        var time: String
        var photo: String?
        var replyTo: Int?
    }

    struct Chat: Sendable, Decodable {
        var id: Int
        var title: String
        var locale: String
        var group: Bool
        var avatar: String?
        var unread: Int
        var pinned: Bool
        var muted: Bool
        var messages: [Message]

        /// True for chats written right to left.
        var isRightToLeft: Bool { locale.hasPrefix("ar") || locale.hasPrefix("he") }
        var lastMessage: Message? { messages.last }
        /// Up to two letters from the title's words, for an avatar without a photo.
        var initials: String {
            let words = title.split(separator: " ").prefix(2)
            return String(words.compactMap(\.first)).uppercased()
        }
    }

    private struct File: Decodable {
        var version: Int
        var chats: [Chat]
    }

    struct LoadError: Error, CustomStringConvertible {
        let description: String
    }

    let chats: [Chat]
    /// The folder photo paths are relative to.
    let assets: URL

    /// Reads and checks the dataset. Any problem is one clear error naming the file.
    init(assets: URL) throws {
        let url = assets.appendingPathComponent("data/chats.json")
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw LoadError(description: "gallery: cannot read the chat dataset \(url.path): \(error.localizedDescription)")
        }
        let file: File
        do { file = try JSONDecoder().decode(File.self, from: data) } catch {
            throw LoadError(description: "gallery: the chat dataset \(url.path) is not valid: \(error)")
        }
        guard file.version == 1, !file.chats.isEmpty else {
            throw LoadError(description: "gallery: the chat dataset \(url.path) has version \(file.version) and \(file.chats.count) chats; expected version 1 with chats")
        }
        self.chats = file.chats
        self.assets = assets
    }

    /// The path of a photo named in the dataset.
    func photoPath(_ relative: String) -> String { assets.appendingPathComponent(relative).path }

    /// The chat shown in row `row` of a list of `rowCount` rows: the dataset repeats.
    func chat(forRow row: Int) -> Chat { chats[row % chats.count] }
}

/// Short forms used in the chat list.
enum Format {
    /// "4,051" → "4K", "12,400" → "12K", "1,250,000" → "1.2M"; small counts stay as they are.
    static func compactCount(_ count: Int) -> String {
        switch count {
        case ..<1000: return String(max(0, count))
        case ..<10_000:
            let tenths = count / 100
            return tenths % 10 == 0 ? "\(tenths / 10)K" : "\(tenths / 10).\(tenths % 10)K"
        case ..<1_000_000: return "\(count / 1000)K"
        default:
            let tenths = count / 100_000
            return tenths % 10 == 0 ? "\(tenths / 10)M" : "\(tenths / 10).\(tenths % 10)M"
        }
    }

    /// The current local time as the dataset writes times ("2026-11-14T04:35").
    static func now() -> String {
        var time = time_t(Date().timeIntervalSince1970)
        var parts = tm()
        localtime_r(&time, &parts)
        return String(format: "%04d-%02d-%02dT%02d:%02d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
                      Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min))
    }

    /// "2026-11-14T04:35" → "04:35".
    static func clockTime(_ timestamp: String) -> String {
        guard let t = timestamp.firstIndex(of: "T") else { return timestamp }
        return String(timestamp[timestamp.index(after: t)...].prefix(5))
    }

    /// "2026-11-14T04:35" → "2026-11-14".
    static func day(_ timestamp: String) -> String { String(timestamp.prefix(10)) }
}
