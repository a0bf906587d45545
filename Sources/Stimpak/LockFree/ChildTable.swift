/// A scope's open children, found by their key's hash (computed once, when the child is opened): buckets, a
/// power of two of them, each the head of a chain through the children's ``Scope/nextInBucket``. Opening and
/// disposing a child is an index and a link, where a dictionary keyed by the hash probed and moved entries
/// twice. Guarded by the container's lock, like the rest of the scope's state.
///
/// One word in the scope: the number of buckets lives in front of them, on a cache line of its own, in memory of
/// the table's own (an array's every write asked whether its storage was shared). It keeps no count of its
/// children: on a parent that many threads open requests below (the root), a count would be a word that every open
/// and every disposal writes, and that every one of them then reads from another core's cache, beside the number of
/// buckets. So a child's open and disposal write only its bucket; the children are counted when an insert makes a
/// chain of three, to decide whether to grow, and when asked (`count`, `isEmpty`). Not copyable, so that it owns
/// that memory: it frees it when it is replaced or its scope goes.
struct ChildTable: ~Copyable {
    /// Nil until the first child: a scope that opens none allocates nothing. The first word holds the number
    /// of buckets; the buckets start a cache line further. At most one child per bucket on average: there are
    /// twice as many when there would be more.
    private var storage: UnsafeMutableRawPointer?

    init() {}

    deinit {
        guard let storage else { return }
        Self.free(storage)
    }

    /// The number of open children: a walk of every chain.
    var count: Int {
        var count = 0
        forEachChild { _ in count += 1 }
        return count
    }

    /// Calls `body` with every child, bucket by bucket.
    private func forEachChild(_ body: (Scope) -> Void) {
        guard let storage else { return }
        let buckets = Self.buckets(storage)
        for index in 0..<Self.bucketCount(storage) {
            var candidate = buckets[index]
            while let child = candidate {
                body(child)
                candidate = child.nextInBucket
            }
        }
    }

    var isEmpty: Bool {
        guard let storage else { return true }
        return Self.isEmpty(storage)
    }

    @inline(never)
    private static func isEmpty(_ storage: UnsafeMutableRawPointer) -> Bool {
        let buckets = Self.buckets(storage)
        for index in 0..<bucketCount(storage) where buckets[index] != nil { return false }
        return true
    }

    /// The first child in the chain of `hash` whose key has that hash and `matches`. A bucket chains keys
    /// of other hashes too: only a key of the same hash is passed to `matches`.
    func first(hash: Int, where matches: (Scope) -> Bool) -> Scope? {
        guard let storage else { return nil }
        var candidate = Self.bucket(hash, in: storage).pointee
        while let child = candidate {
            if child.keyHash == hash, matches(child) { return child }
            candidate = child.nextInBucket
        }
        return nil
    }

    /// The children whose key has `hash` and that `include` accepts; empty (allocating nothing) when none does.
    func all(hash: Int, where include: (Scope) -> Bool) -> [Scope] {
        guard let storage else { return [] }
        var found: [Scope] = []
        var candidate = Self.bucket(hash, in: storage).pointee
        while let child = candidate {
            if child.keyHash == hash, include(child) { found.append(child) }
            candidate = child.nextInBucket
        }
        return found
    }

    /// Links `child`, which is in no table. When that makes a chain of three, the children are counted, and twice
    /// as many buckets made if there are more children than buckets: with hashes that spread, a third child in
    /// one bucket is rare while there are fewer children than buckets.
    mutating func insert(_ child: Scope) {
        guard let storage else { return grow(inserting: child) }
        Self.link(child, into: storage)
        if let second = child.nextInBucket, second.nextInBucket != nil { growIfCrowded() }
    }

    /// Grows when there are more children than buckets.
    @inline(never)
    private mutating func growIfCrowded() {
        guard let storage, count > Self.bucketCount(storage) else { return }
        grow(inserting: nil)
    }

    /// Unlinks `child`, if it is here.
    mutating func remove(_ child: Scope) {
        guard let storage else { return }
        let bucket = Self.bucket(child.keyHash, in: storage)
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
    }

    /// Every child, in no particular order.
    var all: [Scope] {
        var children: [Scope] = []
        forEachChild { children.append($0) }
        return children
    }

    @inline(__always)
    private static func bucketCount(_ storage: UnsafeMutableRawPointer) -> Int {
        storage.load(as: Int.self)
    }

    @inline(__always)
    private static func buckets(_ storage: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Scope?> {
        (storage + RawMemory.cacheLine).assumingMemoryBound(to: Scope?.self)
    }

    @inline(__always)
    private static func bucket(_ hash: Int, in storage: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Scope?> {
        buckets(storage) + (hash & (bucketCount(storage) - 1))
    }

    private static func link(_ child: Scope, into storage: UnsafeMutableRawPointer) {
        let bucket = bucket(child.keyHash, in: storage)
        child.nextInBucket = bucket.pointee.take()
        bucket.pointee = child
    }

    /// Moves the children to twice as many buckets (4 for the first child), with `child`, if any, among them.
    @inline(never)
    private mutating func grow(inserting child: Scope?) {
        // The first child makes no array: `all` of an empty table allocates nothing.
        let children = all
        let bucketCount = Swift.max(4, (storage.map(Self.bucketCount) ?? 0) * 2)
        let larger = RawMemory.allocateLines(byteCount: RawMemory.cacheLine + bucketCount * MemoryLayout<Scope?>.stride)
        larger.storeBytes(of: bucketCount, as: Int.self)
        (larger + RawMemory.cacheLine).bindMemory(to: Scope?.self, capacity: bucketCount)
            .initialize(repeating: nil, count: bucketCount)
        for existing in children { Self.link(existing, into: larger) }
        if let child { Self.link(child, into: larger) }
        if let storage { Self.free(storage) }
        storage = larger
    }

    private static func free(_ storage: UnsafeMutableRawPointer) {
        buckets(storage).deinitialize(count: bucketCount(storage))
        RawMemory.release(storage)
    }
}
