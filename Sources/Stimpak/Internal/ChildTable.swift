/// A scope's open children, found by their key's hash (computed once, when the child is opened): buckets, a
/// power of two of them, each the head of a chain through the children's ``Scope/nextInBucket``. Opening and
/// disposing a child is an index and a link, where a dictionary keyed by the hash probed and moved entries
/// twice. Guarded by the container's lock, like the rest of the scope's state.
///
/// The buckets are memory of its own, not an array: an array's every write asked whether its storage was
/// shared. Not copyable, so that it owns them: it frees them when it is replaced or its scope goes.
struct ChildTable: ~Copyable {
    /// Nil until the first child: a scope that opens none allocates nothing. At most one child per bucket on
    /// average: there are twice as many when there would be more.
    private var buckets: UnsafeMutablePointer<Scope?>?
    private var bucketCount = 0
    private(set) var count = 0

    init() {}

    deinit {
        guard let buckets else { return }
        buckets.deinitialize(count: bucketCount)
        buckets.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// The first child in the chain of `hash` that `matches`.
    func first(hash: Int, where matches: (Scope) -> Bool) -> Scope? {
        guard let buckets else { return nil }
        var candidate = buckets[hash & (bucketCount - 1)]
        while let child = candidate {
            if matches(child) { return child }
            candidate = child.nextInBucket
        }
        return nil
    }

    /// Links `child`, which is in no table.
    mutating func insert(_ child: Scope) {
        if count == bucketCount { grow() }
        Self.link(child, into: buckets.unsafelyUnwrapped, bucketCount: bucketCount)
        count += 1
    }

    /// Unlinks `child`, if it is here.
    mutating func remove(_ child: Scope) {
        guard let buckets else { return }
        let bucket = buckets + (child.keyHash & (bucketCount - 1))
        if bucket.pointee === child {
            // The link moves (`take`), so that the only reference count that changes is the child's.
            bucket.pointee = child.nextInBucket.take()
        } else {
            guard var previous = bucket.pointee else { return }
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
        for index in 0..<bucketCount {
            var candidate = buckets.unsafelyUnwrapped[index]
            while let child = candidate {
                children.append(child)
                candidate = child.nextInBucket
            }
        }
        return children
    }

    private static func link(_ child: Scope, into buckets: UnsafeMutablePointer<Scope?>, bucketCount: Int) {
        let bucket = buckets + (child.keyHash & (bucketCount - 1))
        child.nextInBucket = bucket.pointee.take()
        bucket.pointee = child
    }

    private mutating func grow() {
        let children = all
        let larger = Swift.max(4, bucketCount * 2)
        let new = UnsafeMutablePointer<Scope?>.allocate(capacity: larger)
        new.initialize(repeating: nil, count: larger)
        for child in children { Self.link(child, into: new, bucketCount: larger) }
        if let buckets {
            buckets.deinitialize(count: bucketCount)
            buckets.deallocate()
        }
        buckets = new
        bucketCount = larger
    }
}
