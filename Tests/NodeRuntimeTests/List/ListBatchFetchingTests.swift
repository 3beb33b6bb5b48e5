import Compositor
import Foundation
import XCTest
@testable import NodeRuntime

/// Records the fetches a list asks for and lets the test complete them.
@MainActor
private final class Fetcher: ListBatchFetchingDelegate {
    var contexts: [ListBatchFetchContext] = []
    func list(_ list: ListNode, beginBatchFetch context: ListBatchFetchContext) { contexts.append(context) }
}

/// Batch fetching: a list asks for more when the viewport comes within `leadingScreensForBatching`
/// screenfuls of an end, one fetch per end at a time; rows loaded at the top come in without moving
/// what is on screen; an end with no more is left alone until reset.
@MainActor
final class ListBatchFetchingTests: XCTestCase {
    func testNearTheBottomTheListAsksOnceAndAgainAfterTheRowsCameIn() async {
        let fetcher = Fetcher()
        // 20 rows of 50 points in a 100-point viewport: the bottom is 900 points, 9 screens, away.
        var harness = ListHarness(width: 100, height: 100, source: TestListSource(count: 20, height: 50)) { list in
            list.leadingScreensForBatching = 2
            list.batchFetchingDelegate = fetcher
        }
        harness.settle()
        XCTAssertTrue(fetcher.contexts.isEmpty, "far from the end")
        harness.list.setContentOffset(650, animated: false)
        harness.frame()
        XCTAssertTrue(fetcher.contexts.isEmpty, "250 points from the end: still more than two screens")
        harness.list.setContentOffset(720, animated: false)
        harness.frame()
        harness.frame()
        XCTAssertEqual(fetcher.contexts.map(\.edge), [.bottom], "one fetch, not one per frame")
        XCTAssertTrue(harness.list.isBatchFetching(at: .bottom))

        // The app loads 10 rows and completes: the list is far from its end again, and asks nothing.
        for identity in 20..<30 { harness.source.insert(identity, height: 50, at: harness.source.identities.count) }
        harness.list.insertRows(Array(20..<30))
        fetcher.contexts[0].complete(loadedMore: true)
        harness.settle()
        XCTAssertEqual(harness.list.numberOfRows, 30)
        XCTAssertEqual(fetcher.contexts.count, 1)
        XCTAssertFalse(harness.list.isBatchFetching(at: .bottom))
        harness.list.setContentOffset(harness.list.contentHeight - 100, animated: false)
        harness.frame()
        XCTAssertEqual(fetcher.contexts.count, 2, "near the new end: the next batch")
        XCTAssertEqual(harness.list.statistics.batchFetches, 2)
    }

    func testAnEndWithNoMoreIsNotAskedAgainUntilReset() async {
        let fetcher = Fetcher()
        var harness = ListHarness(width: 100, height: 100, source: TestListSource(count: 3, height: 20)) { list in
            list.batchFetchingDelegate = fetcher
        }
        harness.settle()
        XCTAssertEqual(fetcher.contexts.count, 1, "a list shorter than its viewport asks at once")
        fetcher.contexts[0].complete(loadedMore: false)
        fetcher.contexts[0].complete(loadedMore: true)  // a second completion changes nothing
        harness.settle()
        XCTAssertEqual(fetcher.contexts.count, 1, "no more at the bottom")
        harness.list.resetBatchFetching()
        XCTAssertEqual(fetcher.contexts.count, 2, "asked again after a reset")
    }

    func testOlderMessagesLoadedAtTheTopDoNotMoveWhatIsOnScreen() async throws {
        let fetcher = Fetcher()
        // A chat: stacked from the bottom, 30 rows of 40 points, loading its history at the top.
        var harness = ListHarness(width: 100, height: 200, source: TestListSource(count: 30, height: 40)) { list in
            list.stacksFromBottom = true
            list.batchFetchingEdges = [.top]
            list.leadingScreensForBatching = 1
            list.batchFetchingDelegate = fetcher
        }
        harness.settle()
        XCTAssertTrue(fetcher.contexts.isEmpty, "at the bottom, 1,000 points below the top")
        harness.list.setContentOffset(150, animated: false)
        harness.settle()
        XCTAssertEqual(fetcher.contexts.map(\.edge), [.top])
        let shownRow = 5
        let before = try XCTUnwrap(harness.windowFrame(ofRow: shownRow))

        // Ten older messages arrive above.
        for identity in (100..<110).reversed() { harness.source.insert(identity, height: 40, at: 0) }
        harness.list.insertRows(Array(0..<10), anchor: .firstVisibleRow)
        fetcher.contexts[0].complete(loadedMore: true)
        harness.settle()
        let after = try XCTUnwrap(harness.windowFrame(ofRow: shownRow + 10), "the same message, ten rows later")
        XCTAssertEqual(after.minY, before.minY, accuracy: 0.01, "it stays where the user was reading")
        XCTAssertEqual(harness.list.contentOffset, 150 + 400, accuracy: 0.01)
        XCTAssertEqual(fetcher.contexts.count, 1, "550 points from the top: more than a screen, nothing asked")
    }
}
