/// A child scope's caches by registration index: a ``Slot`` (arguments ignored) or an ``InstanceCache``
/// (a comparator), and for a slot the instance published for the lock-free path (see ``CachedInstance``).
/// A registration that needs no slot's states keeps its instance in the entry itself, with its registration
/// and creation number, and the creating thread's context marks the entry while it is made (see
/// ``Scope/resolveInTable(_:_:owner:_:)``). Only the container's registrations are kept so (a scope's own go
/// through slots), and an entry names its registration without holding it while it is registered (the registry
/// holds it then): a request's creation and its table's release write no reference count that every request
/// shares. A registration taken out of use is pinned first in every open scope's table that names it
/// (``Scope/takeOutOfTables(_:_:)``), and a creation that ends after that keeps its instance with the
/// registration held, so the live report never reads a freed one.
///
/// Open addressing over the entries allocated at the end of the table's own object (one allocation). The
/// locked path inserts and publishes under the container's lock; the lock-free path probes inside a read
/// section, so the words it reads (`index`, `box`) are atomic, an entry's `box` is stored after its
/// `index`, and nothing is ever removed. When the table is three quarters full the scope publishes a larger
/// copy that takes over the references and keeps the old one, which stays readable until the scope is disposed.
///
/// The header and the entries are reached through pointers, not through `ManagedBuffer.header`, so that no
/// access goes through the runtime's exclusivity checks: the container's lock keeps writers apart.
final class ScopeTable: ManagedBuffer<ScopeTableHeader, ScopeTableEntry> {
    typealias Entry = ScopeTableEntry
    /// What an entry says of an instance it keeps as it is (see ``keep(_:isBox:of:pinned:creation:for:_:)``).
    typealias Kept = (registration: AnyObject, creation: Int)

    private static let empty = UInt.max

    /// A table of `capacity` (a power of two) empty entries.
    static func make(capacity: Int) -> ScopeTable {
        let table = unsafeDowncast(
            create(minimumCapacity: capacity) { _ in ScopeTableHeader(size: capacity) }, to: ScopeTable.self)
        table.entries.initialize(repeating: Entry(index: empty, box: 0, cache: nil, registration: 0, creation: 0), count: capacity)
        assert(ScopeTableHeader.stateOffset == MemoryLayout<ScopeTableHeader>.offset(of: \.state))
        return table
    }

    /// A copy of `old` with twice its capacity, which takes over `old`'s references and keeps it alive.
    static func make(growing old: ScopeTable, _ locked: borrowing Locked) -> ScopeTable {
        let table = make(capacity: old.size * 2)
        let oldEntries = old.entries
        for position in 0..<old.size where oldEntries[position].index != empty {
            table.entries[table.probe(oldEntries[position].index, locked)] = oldEntries[position]
            table.state.pointee.count += 1
        }
        old.state.pointee.ownsCaches = false
        table.state.pointee.replaced = old
        return table
    }

    deinit {
        let entries = self.entries
        let size = self.size
        if state.pointee.ownsCaches {
            for position in 0..<size {
                entries[position].cache?.release()
                Self.releaseIfPinned(entries[position].registration)
            }
        }
        entries.deinitialize(count: size)
    }

    @inline(__always)
    private var fields: UnsafeMutablePointer<ScopeTableHeader> {
        withUnsafeMutablePointerToHeader { $0 }
    }

    @inline(__always)
    private var entries: UnsafeMutablePointer<Entry> {
        withUnsafeMutablePointerToElements { $0 }
    }

    /// The fields only the lock's holder reads and writes, through a pointer of their own: an access through
    /// `fields.pointee` covers the whole header, `size` included, which lock-free readers read meanwhile (the
    /// thread sanitizer reports such an overlap as a Swift access race).
    @inline(__always)
    private var state: UnsafeMutablePointer<ScopeTableState> {
        (UnsafeMutableRawPointer(fields) + ScopeTableHeader.stateOffset).assumingMemoryBound(to: ScopeTableState.self)
    }

    /// The number of entries: fixed when the table is made, so lock-free readers may read it.
    @inline(__always)
    private var size: Int { fields.pointee.size }

    /// Where the probe for `index` starts: Fibonacci hashing, since indices are consecutive integers.
    @inline(__always)
    private func start(_ index: UInt) -> Int {
        Int(truncatingIfNeeded: (index &* 0x9E37_79B9_7F4A_7C15) >> 32) & (size - 1)
    }

    @inline(__always)
    private func words(at position: Int) -> UnsafeMutablePointer<UInt> {
        // `index` and `box` are the entry's first two words.
        UnsafeMutableRawPointer(entries + position).assumingMemoryBound(to: UInt.self)
    }

    /// The position of `index`'s entry, or of the empty entry where it would go.
    private func probe(_ index: UInt, _ locked: borrowing Locked) -> Int {
        let entries = self.entries
        let mask = size - 1
        var position = start(index)
        while entries[position].index != index, entries[position].index != Self.empty {
            position = (position + 1) & mask
        }
        return position
    }

    /// The cache of the registration with `index`, or nil.
    func cache(for index: Int, _ locked: borrowing Locked) -> AnyObject? {
        entries[probe(UInt(index), locked)].cache?.takeUnretainedValue()
    }

    /// The cache of the registration with `index` (unretained: the table holds it) and, when it is an instance
    /// kept as it is, its creation number (else 0).
    func entry(for index: Int, _ locked: borrowing Locked) -> (cache: Unmanaged<AnyObject>, creation: Int)? {
        let entry = entries + probe(UInt(index), locked)
        guard let cache = entry.pointee.cache else { return nil }
        return (cache, entry.pointee.creation)
    }

    /// Every cache the table holds, and for an instance kept as it is, its registration and creation number.
    func caches(_ locked: borrowing Locked) -> [(cache: AnyObject, kept: Kept?)] {
        let entries = self.entries
        return (0..<size).compactMap { position in
            let entry = entries[position]
            guard let cache = entry.cache else { return nil }
            guard let registration = Self.registration(entry.registration) else { return (cache.takeUnretainedValue(), nil) }
            return (cache.takeUnretainedValue(), (registration.takeUnretainedValue(), entry.creation))
        }
    }

    /// Whether another entry fits without growing past three quarters full: a probe always ends at an
    /// empty entry, and a scope's first three caches fit in the smallest table (4 entries, 160 bytes).
    var hasRoom: Bool { (state.pointee.count + 1) * 4 <= size * 3 }

    /// Adds (or, when `index` has one, replaces) the cache of a registration; the table keeps it alive.
    /// Call when ``hasRoom``.
    func set(_ cache: AnyObject, for index: Int, _ locked: borrowing Locked) {
        store(.passRetained(cache), registration: 0, creation: 0, for: index, locked)
    }

    /// Adds (or replaces) `instance` (an ``InstanceBox`` when `isBox`), which this table's scope made for
    /// `registration` and keeps as it is, with its creation number, and publishes it (see ``CachedInstance``);
    /// the table keeps the instance alive, and names the registration: holding it when `pinned` (it is out of
    /// use), without holding it otherwise (see ``pinRegistration(_:index:_:)``). Call when ``hasRoom``.
    func keep(
        _ instance: AnyObject, isBox: Bool, of registration: AnyObject, pinned: Bool, creation: Int, for index: Int,
        _ locked: borrowing Locked
    ) {
        var bits = UInt(bitPattern: Unmanaged.passUnretained(registration).toOpaque())
        if pinned {
            _ = Unmanaged.passUnretained(registration).retain()
            bits |= Self.pinned
        }
        let position = store(.passRetained(instance), registration: bits, creation: creation, for: index, locked)
        AtomicWord(words(at: position) + 1).publish(instance: instance, isBox: isBox)
    }

    /// Returns the entry's position.
    @discardableResult
    private func store(
        _ cache: Unmanaged<AnyObject>, registration: UInt, creation: Int, for index: Int,
        _ locked: borrowing Locked
    ) -> Int {
        let position = probe(UInt(index), locked)
        let entry = entries + position
        Self.replaceReferences(of: entry, cache: cache, registration: registration, creation: creation)
        if entry.pointee.index == Self.empty {
            AtomicWord(words(at: position)).store(UInt(index))
            state.pointee.count += 1
        }
        return position
    }

    /// Drops the cache of `index`, which was never published (a creation that failed); the entry stays, so
    /// that probes go on past it.
    func clear(for index: Int, _ locked: borrowing Locked) {
        let entry = entries + probe(UInt(index), locked)
        guard entry.pointee.index == UInt(index) else { return }
        Self.replaceReferences(of: entry, cache: nil, registration: 0, creation: 0)
    }

    /// Holds `registration`, which has `index`, if this table's entry for `index` names it without holding it:
    /// call when it is taken out of use (unregistered, replaced), before anything releases it, so that the
    /// entry's name stays valid while the instance it names is here.
    func pinRegistration(_ registration: AnyObject, index: Int, _ locked: borrowing Locked) {
        let entry = entries + probe(UInt(index), locked)
        let bits = UInt(bitPattern: Unmanaged.passUnretained(registration).toOpaque())
        guard entry.pointee.index == UInt(index), entry.pointee.registration == bits else { return }
        _ = Unmanaged.passUnretained(registration).retain()
        entry.pointee.registration = bits | Self.pinned
    }

    /// The low bit of an entry's `registration`: set when the entry holds the registration (object addresses
    /// are aligned, so it is free).
    private static let pinned: UInt = 1

    /// The registration an entry's `registration` names, or nil.
    private static func registration(_ bits: UInt) -> Unmanaged<AnyObject>? {
        UnsafeMutableRawPointer(bitPattern: bits & ~pinned).map { Unmanaged<AnyObject>.fromOpaque($0) }
    }

    private static func releaseIfPinned(_ bits: UInt) {
        if bits & pinned != 0 { registration(bits)?.release() }
    }

    /// Puts the references (retained by the caller) and creation number in `entry`, and releases the ones it
    /// held, after: a release may run a deinit, which must find the entry consistent.
    private static func replaceReferences(
        of entry: UnsafeMutablePointer<Entry>, cache: Unmanaged<AnyObject>?, registration: UInt,
        creation: Int
    ) {
        let old = (cache: entry.pointee.cache, registration: entry.pointee.registration)
        entry.pointee.cache = cache
        entry.pointee.registration = registration
        entry.pointee.creation = creation
        old.cache?.release()
        releaseIfPinned(old.registration)
    }

    /// Publishes the cached instance (see ``CachedInstance``) of the registration with `index`, which has an
    /// entry.
    func publish(_ box: AnyObject, for index: Int, _ locked: borrowing Locked) {
        AtomicWord(words(at: probe(UInt(index), locked)) + 1).publish(instance: box)
    }

    /// Unpublishes the instance of `index`, if it has an entry; the entry keeps it alive.
    func unpublish(for index: Int, _ locked: borrowing Locked) {
        let position = probe(UInt(index), locked)
        guard entries[position].index == UInt(index) else { return }
        AtomicWord(words(at: position) + 1).store(0)
    }

    /// The published instance's word (see ``CachedInstance``) of the registration with `index`, or 0. Call
    /// inside a read section.
    @inline(__always)
    func box(for index: Int) -> UInt {
        let index = UInt(index)
        let mask = size - 1
        var position = start(index)
        while true {
            let found = AtomicWord(words(at: position)).load()
            if found == index { return AtomicWord(words(at: position) + 1).load() }
            if found == Self.empty { return 0 }
            position = (position + 1) & mask
        }
    }
}

/// A ``ScopeTable``'s fields before its entries: `size`, which lock-free readers read, then the fields the
/// lock's holder writes (reached through their own pointer, see ``ScopeTable``'s `state`).
struct ScopeTableHeader {
    /// The number of entries, a power of two (the buffer's own `capacity` may be larger).
    let size: Int
    var state = ScopeTableState()

    /// Where `state` lies in the header: after `size`, at the next offset its alignment allows, as Swift lays
    /// out a struct's stored properties in order (``ScopeTable/make(capacity:)`` asserts it against the key
    /// path's offset). A constant: a `static let` would cost a `swift_once` call on every access.
    static var stateOffset: Int {
        let alignment = MemoryLayout<ScopeTableState>.alignment
        return (MemoryLayout<Int>.size + alignment - 1) / alignment * alignment
    }

    init(size: Int) {
        self.size = size
    }
}

/// What a ``ScopeTable`` keeps besides its entries. Guarded by the container's lock.
struct ScopeTableState {
    var count = 0
    /// Whether this table owns the references in its entries (false once a larger copy took them over).
    var ownsCaches = true
    /// The smaller table this one replaced: lock-free readers may still be probing it.
    var replaced: ScopeTable?
}

/// One ``ScopeTable`` entry: `index` is `UInt.max` while empty.
struct ScopeTableEntry {
    var index: UInt
    var box: UInt
    var cache: Unmanaged<AnyObject>?
    /// When `cache` is an instance the table's scope made and keeps as it is, what a ``Slot`` would say of it
    /// (for the live report): its registration's address, with the low bit set when the entry holds it (see
    /// ``ScopeTable/pinRegistration(_:index:_:)``), and creation number; else 0 and 0.
    var registration: UInt
    var creation: Int
}
