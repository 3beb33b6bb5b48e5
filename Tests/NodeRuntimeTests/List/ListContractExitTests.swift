import Compositor
import Testing
import TestSupport
@testable import NodeRuntime

/// `ListNode`'s contracts, each broken in a child process that must trap with its message. Every list
/// here shows three rows; each update names the data source's new row count, so that only the rule
/// under test is broken.
@Suite struct ListContractExitTests {
    // MARK: performBatchUpdates, one test per message

    @Test func deletingARowOutOfRangeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await applyToThreeRows(ListUpdate(deletions: [3]), rowsAfter: 2)
        }
        ContractTrap.expectMessage(result, "ListNode.performBatchUpdates: deleted row 3 out of 0..<3")
    }

    @Test func deletingARowTwiceTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await applyToThreeRows(ListUpdate(deletions: [1, 1]), rowsAfter: 1)
        }
        ContractTrap.expectMessage(result, "ListNode.performBatchUpdates: row 1 deleted twice")
    }

    @Test func movingARowOutOfRangeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await applyToThreeRows(ListUpdate(moves: [.init(from: 3, to: 0)]), rowsAfter: 3)
        }
        ContractTrap.expectMessage(result, "ListNode.performBatchUpdates: moved row 3 out of 0..<3")
    }

    @Test func movingARowPastTheEndTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await applyToThreeRows(ListUpdate(moves: [.init(from: 0, to: 3)]), rowsAfter: 3)
        }
        ContractTrap.expectMessage(result, "ListNode.performBatchUpdates: move destination 3 out of 0..<3")
    }

    @Test func movingADeletedRowTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await applyToThreeRows(ListUpdate(deletions: [0], moves: [.init(from: 0, to: 1)]), rowsAfter: 2)
        }
        ContractTrap.expectMessage(result, "ListNode.performBatchUpdates: row 0 deleted or moved twice")
    }

    @Test func movingTwoRowsToOneDestinationTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await applyToThreeRows(ListUpdate(moves: [.init(from: 0, to: 2), .init(from: 1, to: 2)]), rowsAfter: 3)
        }
        ContractTrap.expectMessage(result, "ListNode.performBatchUpdates: row 2 is the destination of two moves")
    }

    @Test func insertingAtAMovesDestinationTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await applyToThreeRows(ListUpdate(insertions: [2], moves: [.init(from: 0, to: 2)]), rowsAfter: 4)
        }
        ContractTrap.expectMessage(result, "ListNode.performBatchUpdates: row 2 inserted twice, or inserted where a row moves to")
    }

    @Test func insertingARowOutOfRangeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await applyToThreeRows(ListUpdate(insertions: [4]), rowsAfter: 4)
        }
        ContractTrap.expectMessage(result, "ListNode.performBatchUpdates: inserted row 4 out of 0..<4")
    }

    @Test func reloadingARowOutOfRangeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await applyToThreeRows(ListUpdate(reloads: [3]), rowsAfter: 3)
        }
        ContractTrap.expectMessage(result, "ListNode.performBatchUpdates: reloaded row 3 out of 0..<3")
    }

    @Test func reloadingADeletedRowTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await applyToThreeRows(ListUpdate(deletions: [1], reloads: [1]), rowsAfter: 2)
        }
        ContractTrap.expectMessage(result, "ListNode.performBatchUpdates: row 1 reloaded and deleted or moved")
    }

    @Test func anUpdateThatDisagreesWithTheDataSourceTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await applyToThreeRows(ListUpdate(deletions: [0]), rowsAfter: 3)
        }
        ContractTrap.expectMessage(result, "ListNode.performBatchUpdates: the data source has 3 rows; 3 − 1 + 0 expected")
    }

    @Test func updatingOffTheUIThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                let list = UncheckedSendable(ListHarness(source: TestListSource(count: 3)).list)
                onBackgroundThread { callIgnoringIsolation { list.value.performBatchUpdates(ListUpdate()) } }
            }
        }
        ContractTrap.expectMessage(result, "ListNode.performBatchUpdates must run on the UI thread")
    }

    // MARK: Rows by index

    @Test func theFrameOfARowOutOfRangeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                _ = ListHarness(source: TestListSource(count: 3)).list.frameOfRow(3)
            }
        }
        ContractTrap.expectMessage(result, "ListNode.frameOfRow: row 3 out of 0..<3")
    }

    @Test func scrollingToARowOutOfRangeTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            await MainActor.run {
                ListHarness(source: TestListSource(count: 3)).list.scroll(to: -1, at: .top, animated: false)
            }
        }
        ContractTrap.expectMessage(result, "ListNode.scroll(to:): row -1 out of 0..<3")
    }

    @Test func rowGeometryNeedsOneMeasuredFlagPerHeight() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            var geometry = RowGeometry()
            geometry.replaceAll(heights: [20, 20], measured: [true])
        }
        ContractTrap.expectMessage(result, "RowGeometry.replaceAll: one measured flag per height")
    }
}

/// Shows a list of three rows, changes its data source to `rowsAfter` rows and applies `update`
/// (in an exit test's child process, on the main actor).
private func applyToThreeRows(_ update: ListUpdate, rowsAfter: Int) async {
    await MainActor.run { applyOnUIThread(update, rowsAfter: rowsAfter) }
}

@MainActor
private func applyOnUIThread(_ update: ListUpdate, rowsAfter: Int) {
    let harness = ListHarness(source: TestListSource(count: 3))
    harness.source.identities = Array(0..<rowsAfter)
    harness.source.heights = Array(repeating: 20, count: rowsAfter)
    harness.list.performBatchUpdates(update)
}
