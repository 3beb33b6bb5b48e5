import Compositor

/// A binary heap whose elements are found by id: the most urgent element (by `precedes`) is at the
/// top, and any element can be removed or re-keyed in O(log n) because the heap keeps each id's slot.
///
/// When many keys change between two pops (a scroll re-prioritising every waiting draw), sifting each
/// one costs more than rebuilding: past `max(32, count / 8)` in-place changes since the last pop, the
/// heap only records keys and marks itself stale, and the next pop rebuilds it in O(n).
///
/// A value type with no locking of its own: the scheduler keeps it inside its lock.
/// - Thread: whoever owns the value
struct IndexedHeap<Element> {
    typealias ID = UInt64

    /// The elements in heap order (the first is the most urgent unless `isStale`).
    private(set) var elements: [Element] = []
    /// Each element's slot in `elements`.
    private var slots: [ID: Int] = [:]
    private let idOf: (Element) -> ID
    /// True when `a` must come out before `b`. Changing it marks the heap stale.
    var precedes: (Element, Element) -> Bool {
        didSet { if !elements.isEmpty { isStale = true } }
    }
    /// True while keys changed without restoring the heap property; the next pop rebuilds.
    private(set) var isStale = false
    private var siftsSincePop = 0

    init(id: @escaping (Element) -> ID, precedes: @escaping (Element, Element) -> Bool) {
        idOf = id
        self.precedes = precedes
    }

    var count: Int { elements.count }
    var isEmpty: Bool { elements.isEmpty }

    func contains(_ id: ID) -> Bool { slots[id] != nil }

    /// The element with `id`, if it is in the heap.
    subscript(id: ID) -> Element? { slots[id].map { elements[$0] } }

    /// Adds `element`; its id must not be in the heap already.
    mutating func push(_ element: Element) {
        Contract.require(slots[idOf(element)] == nil, "IndexedHeap.push: the id is already in the heap")
        elements.append(element)
        slots[idOf(element)] = elements.count - 1
        if !isStale { siftUp(elements.count - 1) }
    }

    /// Removes and returns the most urgent element.
    mutating func popFirst() -> Element? {
        guard !elements.isEmpty else { return nil }
        if isStale { rebuild() }
        siftsSincePop = 0
        return remove(at: 0)
    }

    /// Removes and returns the element with `id`, if it is in the heap.
    @discardableResult
    mutating func remove(_ id: ID) -> Element? {
        guard let slot = slots[id] else { return nil }
        return remove(at: slot)
    }

    /// Changes the element with `id` in place (its key may move either way) and restores the order,
    /// or marks the heap stale when many changes came since the last pop. Returns false when `id` is
    /// not in the heap.
    @discardableResult
    mutating func update(_ id: ID, _ change: (inout Element) -> Void) -> Bool {
        guard let slot = slots[id] else { return false }
        change(&elements[slot])
        if isStale { return true }
        if siftsSincePop >= max(32, elements.count / 8) {
            isStale = true
            return true
        }
        siftsSincePop += 1
        restore(at: slot)
        return true
    }

    /// Takes every element out, in no particular order.
    mutating func removeAll() -> [Element] {
        defer {
            elements.removeAll()
            slots.removeAll()
            isStale = false
        }
        return elements
    }

    // MARK: Internals

    private mutating func remove(at slot: Int) -> Element {
        let removed = elements[slot]
        slots[idOf(removed)] = nil
        let last = elements.removeLast()
        if slot < elements.count {
            place(last, at: slot)
            if !isStale { restore(at: slot) }
        }
        return removed
    }

    @inline(__always)
    private mutating func place(_ element: Element, at slot: Int) {
        elements[slot] = element
        slots[idOf(element)] = slot
    }

    private mutating func restore(at slot: Int) {
        if slot > 0 && precedes(elements[slot], elements[(slot - 1) / 2]) {
            siftUp(slot)
        } else {
            siftDown(slot)
        }
    }

    private mutating func siftUp(_ start: Int) {
        var slot = start
        let element = elements[slot]
        while slot > 0 {
            let parent = (slot - 1) / 2
            guard precedes(element, elements[parent]) else { break }
            place(elements[parent], at: slot)
            slot = parent
        }
        place(element, at: slot)
    }

    private mutating func siftDown(_ start: Int) {
        var slot = start
        let element = elements[slot]
        let count = elements.count
        while true {
            let left = 2 * slot + 1
            guard left < count else { break }
            let right = left + 1
            let child = right < count && precedes(elements[right], elements[left]) ? right : left
            guard precedes(elements[child], element) else { break }
            place(elements[child], at: slot)
            slot = child
        }
        place(element, at: slot)
    }

    private mutating func rebuild() {
        if elements.count > 1 {
            for slot in stride(from: elements.count / 2 - 1, through: 0, by: -1) { siftDown(slot) }
        }
        isStale = false
    }
}
