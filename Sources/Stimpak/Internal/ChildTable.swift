/// A scope's open children, found by their key's hash (computed once, when the child is opened): an array of
/// buckets, a power of two long, each the head of a chain through the children's ``Scope/nextInBucket``.
/// Opening and disposing a child is an index and a link, where a dictionary keyed by the hash probed and moved
/// entries twice. Guarded by the container's lock, like the rest of the scope's state.
struct ChildTable {
    /// Empty until the first child: a scope that opens none allocates nothing. At most one child per bucket
    /// on average: the array doubles when it would hold more.
    private var buckets: ContiguousArray<Scope?> = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// The first child in the chain of `hash` that `matches`.
    func first(hash: Int, where matches: (Scope) -> Bool) -> Scope? {
        guard count != 0 else { return nil }
        var candidate = buckets[hash & (buckets.count - 1)]
        while let child = candidate {
            if matches(child) { return child }
            candidate = child.nextInBucket
        }
        return nil
    }

    /// Links `child`, which is in no table.
    mutating func insert(_ child: Scope) {
        if count == buckets.count { grow() }
        link(child)
        count += 1
    }

    /// Unlinks `child`, if it is here.
    mutating func remove(_ child: Scope) {
        guard count != 0 else { return }
        let index = child.keyHash & (buckets.count - 1)
        if buckets[index] === child {
            // The link moves (`take`), so that the only reference count that changes is the child's.
            buckets[index] = child.nextInBucket.take()
        } else {
            guard var previous = buckets[index] else { return }
            while true {
                guard let next = previous.nextInBucket else { return }
                if next === child { break }
                previous = next
            }
            previous.nextInBucket = child.nextInBucket.take()
        }
        count -= 1
    }

    /// Every child, in no particular order.
    var all: [Scope] {
        var children: [Scope] = []
        children.reserveCapacity(count)
        for head in buckets {
            var candidate = head
            while let child = candidate {
                children.append(child)
                candidate = child.nextInBucket
            }
        }
        return children
    }

    private mutating func link(_ child: Scope) {
        let index = child.keyHash & (buckets.count - 1)
        child.nextInBucket = buckets[index]
        buckets[index] = child
    }

    private mutating func grow() {
        let children = all
        buckets = ContiguousArray(repeating: nil, count: Swift.max(4, buckets.count * 2))
        for child in children { link(child) }
    }
}
