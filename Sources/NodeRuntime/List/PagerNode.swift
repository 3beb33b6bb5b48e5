import Compositor
import FoundationEssentials
import Glibc
import Dispatch

/// Pages side by side, one filling the pager at a time: a photo viewer, an onboarding flow, a
/// carousel of stories. Pages are the rows of a horizontal `ListNode` (this class), each measured
/// exactly at the pager's size, so only the pages near the current one have nodes: the list's ranges
/// make them on display workers as they come near and release them once far behind, whatever the page
/// count.
///
/// A drag moves the pages with the finger; the release comes to rest on a page (the next one in the
/// direction of a quick flick, else the one mostly showing); the wheel (either direction) and ←/→
/// (and ↑/↓, Page Up/Down, Space) turn one page, Home and End go to the first and last, animated.
/// Pages come from the list's `dataSource` (`ListDataSource`, a row a page).
/// - Thread: made on any thread like any node; the members below are UI-thread only (checked).
@MainActor
public final class PagerNode: ListNode, @unchecked Sendable {
    /// A pager with no pages yet; set `dataSource`. - Thread: any
    public nonisolated override init() {
        super.init(scrollDirection: .horizontal, pages: true)
    }

    /// The page showing (mostly), or the one an animated turn is heading to. 0 without pages.
    /// - Thread: main
    public var currentPage: Int {
        UIThread.precondition("PagerNode.currentPage")
        return currentPageTarget ?? 0
    }

    /// The number of pages. - Thread: main
    public var pageCount: Int {
        UIThread.precondition("PagerNode.pageCount")
        return numberOfRows
    }

    /// Turns to `page` (clamped to the pages). - Thread: main
    public func scrollToPage(_ page: Int, animated: Bool) {
        UIThread.precondition("PagerNode.scrollToPage")
        guard numberOfRows > 0 else { return }
        scroll(to: min(max(0, page), numberOfRows - 1), at: .top, animated: animated)
    }

    /// The node of `page`, once made; nil outside the measure range. - Thread: main
    public func nodeForPage(_ page: Int) -> Node? {
        UIThread.precondition("PagerNode.nodeForPage")
        return nodeForRow(page)
    }
}
