import Tessera
import Foundation

/// Where the gallery's asset server answers (`--serve-assets`), and the loaders that fetch from it:
/// the chat list's avatars by URL, and the pages of a thread's history.
/// - Thread: any (a value)
struct ServedAssets: Sendable {
    /// `http://127.0.0.1:PORT/`.
    let baseURL: URL
    /// Fetches the avatars. No disk cache: the server is on this machine and its port, so every URL,
    /// changes with each run, so nothing kept on disk would be asked for again.
    let imageLoader: NetworkImageLoader
    /// Fetches pages of history. It keeps nothing, so each page is asked of the server.
    let messageLoader: NetworkImageLoader

    /// Why a page of history could not be had.
    /// - Thread: any (a value)
    struct HistoryError: Error, CustomStringConvertible {
        let description: String
    }

    /// Loaders for the server at `baseURL`, trusting `trustedCertificates` (PEM) besides the system's
    /// authorities.
    init(baseURL: URL, trustedCertificates: [String] = []) {
        self.baseURL = baseURL
        var configuration = NetworkImageLoader.Configuration()
        configuration.additionalTrustedCertificates = trustedCertificates
        configuration.diskCacheDirectory = nil
        configuration.connectTimeout = 5
        configuration.idleTimeout = 10
        configuration.totalTimeout = 30
        imageLoader = NetworkImageLoader(configuration: configuration)
        configuration.memoryCacheBytes = 0
        configuration.maximumBodyBytes = 8 << 20
        messageLoader = NetworkImageLoader(configuration: configuration)
    }

    /// The URL of the file at `relativePath` in the assets folder ("photos/brick.jpg").
    func url(forAsset relativePath: String) -> URL {
        relativePath.split(separator: "/").reduce(baseURL) { $0.appendingPathComponent(String($1)) }
    }

    /// The URL of the page of at most `count` messages of chat `chat` just older than its message
    /// `before`.
    func messagesURL(chat: Int, before: Int, count: Int) -> URL {
        URL(string: "messages?chat=\(chat)&before=\(before)&count=\(count)", relativeTo: baseURL)!.absoluteURL
    }

    /// Fetches and decodes that page, waiting for it on this thread.
    /// - Throws: `HistoryError`, saying what failed: the fetch (after the loader's retries) or the
    ///   decode.
    /// - Thread: any but the UI thread (it blocks)
    func olderMessages(chat: Int, before: Int, count: Int) throws -> AssetServer.MessagesPage {
        let url = messagesURL(chat: chat, before: before, count: count)
        let bytes: [UInt8]
        do {
            guard let fetched = try messageLoader.bytes(for: url) else {
                throw HistoryError(description: "\(url.absoluteString): the fetch was cancelled")
            }
            bytes = fetched
        } catch let error as NetworkImageError {
            throw HistoryError(description: "\(url.absoluteString): \(error)")
        }
        do {
            return try JSONDecoder().decode(AssetServer.MessagesPage.self, from: Data(bytes))
        } catch {
            throw HistoryError(description: "\(url.absoluteString) is not a page of messages: \(error)")
        }
    }
}

/// A thread's older messages from the asset server, a page at a time (`ThreadController.servedHistory`).
/// - Thread: main
@MainActor
final class ServedHistory {
    let assets: ServedAssets
    /// Why the last page could not be had, once one could not; the thread then has no more history.
    private(set) var failure: String?
    /// Pages asked of the server.
    private(set) var pagesRequested = 0

    init(assets: ServedAssets) {
        self.assets = assets
    }

    /// The thread's batch fetch: asks for the messages above the oldest one `thread` shows, decodes
    /// them on another thread, and inserts them on the UI thread as a batch from memory is inserted.
    /// A failure ends the history there: the fetch completes with no more, and the reason is
    /// reported.
    func fetchOlder(for thread: ThreadController, context: ListBatchFetchContext) {
        guard let before = Self.oldestMessageID(in: thread.items) else {
            context.complete(loadedMore: false)
            return
        }
        pagesRequested += 1
        let assets = assets, chatID = thread.chat.id, count = ThreadController.olderBatch
        DispatchQueue.global(qos: .userInitiated).async { [weak self, weak thread] in
            let result = Result { try assets.olderMessages(chat: chatID, before: before, count: count) }
            Runtime.shared.mainQueue.enqueue { [weak self, weak thread] in
                guard let self, let thread else { return }
                self.pageDidArrive(result, before: before, thread: thread, context: context)
            }
        }
    }

    private func pageDidArrive(_ result: Result<AssetServer.MessagesPage, any Error>, before: Int,
                               thread: ThreadController, context: ListBatchFetchContext) {
        switch result {
        case .failure(let error):
            failure = "\(error)"
            GalleryApp.report("gallery: older messages of chat \(thread.chat.id) could not be loaded: \(error)")
            context.complete(loadedMore: false)
        case .success(let page):
            // The rows above were changed meanwhile (nothing else inserts there): ask again.
            guard Self.oldestMessageID(in: thread.items) == before else {
                context.complete(loadedMore: true)
                return
            }
            let batch = Self.items(for: page, above: thread.items.first, group: thread.chat.group)
            thread.insertOlderItems(batch)
            GalleryApp.report("gallery: loaded \(batch.count) older items from the server, \(page.remaining) messages left")
            context.complete(loadedMore: page.remaining > 0)
        }
    }

    /// The id of the oldest message among `items`.
    static func oldestMessageID(in items: [ThreadItem]) -> Int? {
        items.lazy.compactMap { item -> Int? in
            if case .message(let message, _, _) = item { return message.id } else { return nil }
        }.first
    }

    /// The thread's items for `page`, to go above `top` (the first item shown): the same items, day
    /// pills included, that the whole history makes (`ThreadController` from memory). A day pill
    /// goes before a message whose day differs from the message before it, and before the chat's
    /// first message; the one before the page's first message waits for the next page (unless there
    /// is none), and one goes under the page when `top` is a message of another day.
    static func items(for page: AssetServer.MessagesPage, above top: ThreadItem?, group: Bool) -> [ThreadItem] {
        let byID = Dictionary((page.messages + page.quoted).map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var items: [ThreadItem] = []
        // The day of the message above; "" above the chat's first; nil while it is not loaded.
        var dayAbove: String? = page.remaining == 0 ? "" : nil
        for message in page.messages {
            let day = Format.day(message.time)
            if let dayAbove, day != dayAbove { items.append(.day(day)) }
            items.append(.message(message, replyTo: message.replyTo.flatMap { byID[$0] }, group: group))
            dayAbove = day
        }
        if case .message(let first, _, _) = top, let dayAbove, Format.day(first.time) != dayAbove {
            items.append(.day(Format.day(first.time)))
        }
        return items
    }
}

extension GalleryApp {
    /// True while something asked of the asset server for the screen shown has not arrived: a page
    /// of the thread's history, or the avatar of a chat row on screen.
    var isWaitingForServedAssets: Bool {
        guard assetServer != nil, let list = visibleList else { return false }
        if list.isBatchFetching(at: .top) { return true }
        guard let rows = list.visibleRows else { return false }
        return rows.contains { row in
            ((list.nodeForRow(row) as? ChatRowNode)?.avatar as? ImageNode)?.loadState == .loading
        }
    }

    /// After settling: while the screen waits for the asset server (`isWaitingForServedAssets`),
    /// waits for what arrives and settles again, for at most `timeout` seconds; then says what is
    /// still missing rather than leave it unexplained.
    func settleServedAssets(timeout: Double = 20) throws {
        let deadline = MonotonicClock.nanoseconds() + UInt64(timeout * 1e9)
        while isWaitingForServedAssets {
            let now = MonotonicClock.nanoseconds()
            guard now < deadline else {
                Self.report("gallery: still waiting for the asset server after \(Int(timeout)) s; showing what has arrived")
                return
            }
            UIWakeup.shared.reset()
            try application.settle()
            if isWaitingForServedAssets { _ = UIWakeup.shared.wait(timeout: Double(deadline - now) / 1e9) }
        }
    }
}
