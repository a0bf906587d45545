/// A scope's open children, found by their key's hash (computed once, when the child is opened): buckets, a
/// power of two of them, each the head of a chain through the children's ``Scope/nextInBucket``. Opening and
/// disposing a child is an index and a link, where a dictionary keyed by the hash probed and moved entries
/// twice. Guarded by the container's lock, like the rest of the scope's state.
///
/// One word in the scope: the counts live in front of the buckets, in memory of the table's own (an array's
/// every write asked whether its storage was shared). Not copyable, so that it owns that memory: it frees it
/// when it is replaced or its scope goes.
struct ChildTable: ~Copyable {
    private struct Header {
        var count: Int
        var bucketCount: Int
    }

    /// Nil until the first child: a scope that opens none allocates nothing. At most one child per bucket on
    /// average: there are twice as many when there would be more.
    private var storage: UnsafeMutablePointer<Header>?

    init() {}

    deinit {
        guard let storage else { return }
        Self.free(storage)
    }

    var count: Int { storage?.pointee.count ?? 0 }

    var isEmpty: Bool { count == 0 }

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

    /// Links `child`, which is in no table.
    mutating func insert(_ child: Scope) {
        guard let storage, storage.pointee.count < storage.pointee.bucketCount else { return grow(inserting: child) }
        Self.link(child, into: storage)
        storage.pointee.count += 1
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
        storage.pointee.count -= 1
    }

    /// Every child, in no particular order.
    var all: [Scope] {
        guard let storage else { return [] }
        var children: [Scope] = []
        children.reserveCapacity(storage.pointee.count)
        let buckets = Self.buckets(storage)
        for index in 0..<storage.pointee.bucketCount {
            var candidate = buckets[index]
            while let child = candidate {
                children.append(child)
                candidate = child.nextInBucket
            }
        }
        return children
    }

    private static func buckets(_ storage: UnsafeMutablePointer<Header>) -> UnsafeMutablePointer<Scope?> {
        UnsafeMutableRawPointer(storage + 1).assumingMemoryBound(to: Scope?.self)
    }

    private static func bucket(_ hash: Int, in storage: UnsafeMutablePointer<Header>) -> UnsafeMutablePointer<Scope?> {
        buckets(storage) + (hash & (storage.pointee.bucketCount - 1))
    }

    private static func link(_ child: Scope, into storage: UnsafeMutablePointer<Header>) {
        let bucket = bucket(child.keyHash, in: storage)
        child.nextInBucket = bucket.pointee.take()
        bucket.pointee = child
    }

    /// Moves the children to twice as many buckets (4 for the first child), with `child` among them.
    @inline(never)
    private mutating func grow(inserting child: Scope) {
        // The first child makes no array: `all` of an empty table allocates nothing.
        let children = all
        let bucketCount = Swift.max(4, (storage?.pointee.bucketCount ?? 0) * 2)
        let raw = RawMemory.allocate(byteCount: MemoryLayout<Header>.stride + bucketCount * MemoryLayout<Scope?>.stride)
        let larger = raw.bindMemory(to: Header.self, capacity: 1)
        larger.initialize(to: Header(count: children.count + 1, bucketCount: bucketCount))
        (raw + MemoryLayout<Header>.stride).bindMemory(to: Scope?.self, capacity: bucketCount)
            .initialize(repeating: nil, count: bucketCount)
        for existing in children { Self.link(existing, into: larger) }
        Self.link(child, into: larger)
        if let storage { Self.free(storage) }
        storage = larger
    }

    private static func free(_ storage: UnsafeMutablePointer<Header>) {
        buckets(storage).deinitialize(count: storage.pointee.bucketCount)
        storage.deinitialize(count: 1)
        RawMemory.release(UnsafeMutableRawPointer(storage))
    }
}
