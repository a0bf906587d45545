/// An immutable snapshot of the registrations that the lock-free resolve path can serve, published by
/// the ``Registry`` and read inside a read section (see ARCHITECTURE.md).
///
/// Open addressing over raw memory, hashed on the two type identities (and the key's hash when there is
/// one), so that a lookup neither hashes with SipHash for unkeyed services nor touches a reference count.
/// Registrations the fast path can't serve (callbacks, comparators, scope-local values) are left out:
/// a miss sends the resolve to the locked path, which knows everything.
@usableFromInline
final class LookupTable {
    /// What the fast path does with a registration.
    @usableFromInline
    enum Route: UInt8 {
        /// Call the factory (no `resolved` callback).
        case transient
        /// Read the instance from the registration's root word (a singleton).
        case root
        /// Read the instance from the resolving scope's published slots, or the root word when the
        /// resolving scope is the root (`.inScope`, and `.scopedTo`, whose instance a scope below its owner
        /// publishes too; arguments ignored).
        case scoped
        /// Load the instance weakly referenced by the ``WeakBox`` in the registration's root word (`.weak`).
        case weakRoot
        /// Read the `provide`d value the resolving scope published, itself or for an ancestor's value it
        /// found once (`index` is the key's locals index); nothing published sends the resolve to the
        /// locked path, which searches the scopes and then the registration (if any).
        case provided
    }

    @usableFromInline
    struct Bucket {
        /// nil marks an empty bucket.
        @usableFromInline var service: ObjectIdentifier?
        /// The arguments' type identity, with bit 0 set when the registration has a key (type metadata
        /// is 8-byte aligned): an unkeyed lookup compares two words, not three (see ``tagged(_:isKeyed:)``).
        @usableFromInline var arguments: UInt
        /// The key's ``KeyHash`` (0 without a key).
        @usableFromInline var keyHash: Int
        /// The type of the key's base and an unretained ``KeyBox`` of it: lookups compare keys as that type,
        /// never through `AnyHashable`.
        @usableFromInline var keyType: ObjectIdentifier?
        @usableFromInline var typedKey: UnsafeMutableRawPointer?
        /// nil only in a `.provided` bucket.
        @usableFromInline var registration: Unmanaged<AnyObject>?
        @usableFromInline var route: Route
        @usableFromInline var index: Int
        /// The registration's root word; nil only in a `.provided` bucket.
        @usableFromInline var rootWord: AtomicWord?
    }

    @usableFromInline let mask: Int
    /// 64 minus the bits of a position: a position is the top bits of a product (see
    /// ``position(_:_:keyHash:multiplier:shift:)``).
    @usableFromInline let shift: Int
    /// The odd multiplier of the positions: the one of ``multipliers`` that leaves the fewest buckets away
    /// from their first position (see ``init(_:generation:_:)``).
    @usableFromInline let multiplier: UInt
    @usableFromInline let buckets: UnsafeMutablePointer<Bucket>
    /// The registry's generation when the table was built (see ``Registry/generation``).
    @usableFromInline let generation: Int
    /// Keeps the registrations and typed keys the buckets point to alive.
    private let registrations: [any Registration]
    private let typedKeys: [AnyObject]

    /// Odd 64-bit constants with well-mixed bits (the golden ratio's, then SplitMix64's and MurmurHash3's).
    private static let multipliers: [UInt] = [
        0x9E37_79B9_7F4A_7C15, 0xBF58_476D_1CE4_E5B9, 0x94D0_49BB_1331_11EB, 0xFF51_AFD7_ED55_8CCD,
        0xC4CE_B9FE_1A85_EC53, 0xD6E8_FEB8_6659_FD93, 0xA076_1D64_78BD_642F, 0xE703_7ED1_A0B4_28DB,
    ]

    /// Builds the table of `entries`: at most a quarter full, with the multiplier that puts the most buckets
    /// at their first position, so that a lookup usually compares one bucket. A table is built once per
    /// change of the registrations; trying a multiplier is one pass over the buckets that writes none.
    init(_ entries: [ServiceKey: Registry.Entry], generation: Int, _ locked: borrowing Locked) {
        self.generation = generation
        // By index, so that only a provided entry's key is copied.
        var registrations: [any Registration] = []
        var provided: [(ServiceKey, Int)] = []
        var filled: [Bucket] = []
        var typedKeys: [AnyObject] = []
        registrations.reserveCapacity(entries.count)
        filled.reserveCapacity(entries.count)
        var position = entries.startIndex
        while position != entries.endIndex {
            let entry = entries.values[position]
            if entry.hasScopeLocals {
                provided.append((entries.keys[position], entry.localsIndex))
            } else if let registration = entry.registration, let route = registration.route(locked),
                let bucket = Self.bucket(
                    registration.serviceKey, registration: Unmanaged.passUnretained(registration), route: route,
                    index: registration.index, rootWord: registration.rootWord, typedKeys: &typedKeys)
            {
                registrations.append(registration)
                filled.append(bucket)
            }
            entries.formIndex(after: &position)
        }
        for (serviceKey, localsIndex) in provided {
            guard
                let bucket = Self.bucket(
                    serviceKey, registration: nil, route: .provided, index: localsIndex, rootWord: nil, typedKeys: &typedKeys)
            else { continue }
            filled.append(bucket)
        }
        var capacity = 8
        var shift = 61
        while capacity < filled.count * 4 {
            capacity *= 2
            shift -= 1
        }
        mask = capacity - 1
        self.shift = shift
        let multiplier = Self.bestMultiplier(for: filled, mask: mask, shift: shift)
        self.multiplier = multiplier
        // Lines of their own: every resolve reads them, and another allocation's writes beside them would take
        // their first or last line from the readers' caches.
        buckets = RawMemory.allocateLines(byteCount: MemoryLayout<Bucket>.stride * capacity)
            .bindMemory(to: Bucket.self, capacity: capacity)
        let empty = Bucket(
            service: nil, arguments: 0, keyHash: 0,
            keyType: nil, typedKey: nil, registration: nil, route: .transient, index: 0, rootWord: nil)
        buckets.initialize(repeating: empty, count: capacity)
        for bucket in filled {
            var position = Self.position(of: bucket, multiplier: multiplier, shift: shift)
            while buckets[position].service != nil { position = (position + 1) & mask }
            buckets[position] = bucket
        }
        self.registrations = registrations
        self.typedKeys = typedKeys
    }

    /// The bucket for `serviceKey`, its typed key kept alive in `typedKeys`; nil for a key whose base is not
    /// `Hashable`-openable (the locked path serves it). Only during `init`.
    private static func bucket(
        _ serviceKey: ServiceKey, registration: Unmanaged<AnyObject>?, route: Route, index: Int, rootWord: AtomicWord?,
        typedKeys: inout [AnyObject]
    ) -> Bucket? {
        var typed: TypedKey?
        if let box = serviceKey.keyBox {
            guard let found = TypedKey(box) else { return nil }
            typedKeys.append(found.box)
            typed = found
        }
        return Bucket(
            service: ObjectIdentifier(serviceKey.service),
            arguments: tagged(ObjectIdentifier(serviceKey.arguments), isKeyed: typed != nil), keyHash: typed?.hash ?? 0,
            keyType: typed?.type, typedKey: typed.map { Unmanaged.passUnretained($0.box).toOpaque() },
            registration: registration, route: route, index: index, rootWord: rootWord)
    }

    /// The first position of a filled bucket's probe.
    private static func position(of bucket: Bucket, multiplier: UInt, shift: Int) -> Int {
        position(bucket.service!, bucket.arguments, keyHash: bucket.keyHash, multiplier: multiplier, shift: shift)
    }

    /// Of ``multipliers``, the first that puts every bucket at its first position, or else the one whose
    /// buckets lie the fewest positions away in all, inserted in `filled`'s order. A table of more than 64
    /// buckets filled keeps the first: no multiplier spares so many every collision, and each try is a pass.
    private static func bestMultiplier(for filled: [Bucket], mask: Int, shift: Int) -> UInt {
        var best = multipliers[0]
        guard filled.count <= 64 else { return best }
        var bestDistance = Int.max
        var taken = [Bool](repeating: false, count: mask + 1)
        for multiplier in multipliers {
            for position in taken.indices { taken[position] = false }
            var distance = 0
            for bucket in filled {
                var position = Self.position(of: bucket, multiplier: multiplier, shift: shift)
                while taken[position] {
                    position = (position + 1) & mask
                    distance += 1
                }
                taken[position] = true
                // No better than the best so far: the next multiplier.
                if distance >= bestDistance { break }
            }
            if distance < bestDistance {
                best = multiplier
                bestDistance = distance
            }
            if bestDistance == 0 { break }
        }
        return best
    }

    /// A registration's key as the buckets hold it: its ``KeyHash``, its base's type and a ``KeyBox`` of the
    /// base (see ``AnyKeyBox/lookup``).
    private struct TypedKey {
        let hash: Int
        let type: ObjectIdentifier
        let box: AnyKeyBox

        /// The typed key of a registration's key, from its ``ServiceKey``'s box: a `String` or `Int` key's box
        /// is already a ``KeyBox`` of its type (see ``Registry/registeredBox(for:)``);
        /// any other key is read there (not copied: an `AnyHashable` copy goes through its box's value
        /// witnesses) and boxed as its own type.
        init?(_ key: AnyKeyBox) {
            // The box's lookup asked once: for a `String` key it hashes the key.
            if let lookup = key.lookup {
                self.init(lookup, box: key)
            } else if let box = Self.typedBox(of: key), let lookup = box.lookup {
                self.init(lookup, box: box)
            } else {
                return nil
            }
        }

        private init(_ lookup: (type: ObjectIdentifier, hash: Int), box: AnyKeyBox) {
            hash = lookup.hash
            type = lookup.type
            self.box = box
        }

        /// `key`'s base in a ``KeyBox`` of its own type (opened as `any Hashable`, a runtime cast), or nil
        /// when it can't be, and the locked path serves it.
        private static func typedBox(of key: AnyKeyBox) -> AnyKeyBox? {
            guard let base = key.key.base as? any Hashable else { return nil }
            func boxed<Base: Hashable>(_ base: Base) -> AnyKeyBox { KeyBox(base, key: key.key, hash: key.hash) }
            return boxed(base)
        }
    }

    deinit {
        buckets.deinitialize(count: mask + 1)
        RawMemory.release(buckets)
    }

    /// The table's memory, for lookups inside a read section: valid until the section ends, read without
    /// touching the table's reference count.
    @inlinable
    var probe: Probe {
        Probe(buckets: buckets, mask: mask, shift: shift, multiplier: multiplier, generation: generation)
    }

    /// Mixes the type identities' addresses (`arguments` as a bucket's word, with its keyed bit) and the
    /// key's hash (0 without a key) into the first position
    /// of a probe: Fibonacci hashing, one multiply (by the table's `multiplier`) whose top `64 - shift` bits
    /// are the position (type metadata records lie close together, and the top bits spread such neighbours best).
    @inlinable @inline(__always)
    static func position(
        _ service: ObjectIdentifier, _ arguments: UInt, keyHash: Int, multiplier: UInt, shift: Int
    ) -> Int {
        // Not shifted right by the 3 alignment bits: the position is the product's top bits, which every
        // bit of the sum reaches.
        let bits = (UInt(bitPattern: service) &+ arguments &* 0x9E37_79B9_7F4A_7C15) ^ UInt(bitPattern: keyHash)
        return Int(truncatingIfNeeded: (bits &* multiplier) &>> UInt(truncatingIfNeeded: shift))
    }

    /// A bucket's `arguments` word: the identity's bits, bit 0 set for a keyed registration.
    @inlinable @inline(__always)
    static func tagged(_ arguments: ObjectIdentifier, isKeyed: Bool) -> UInt {
        UInt(bitPattern: arguments) | (isKeyed ? 1 : 0)
    }

    /// A published table's buckets, mask, hashing and generation, copied out of it inside a read section.
    @usableFromInline
    struct Probe {
        @usableFromInline let buckets: UnsafeMutablePointer<Bucket>
        @usableFromInline let mask: Int
        @usableFromInline let shift: Int
        @usableFromInline let multiplier: UInt
        @usableFromInline let generation: Int

        @inlinable
        init(buckets: UnsafeMutablePointer<Bucket>, mask: Int, shift: Int, multiplier: UInt, generation: Int) {
            self.buckets = buckets
            self.mask = mask
            self.shift = shift
            self.multiplier = multiplier
            self.generation = generation
        }

        /// The bucket of the unkeyed (service, arguments), if the fast path serves it.
        @inlinable @inline(__always)
        func bucket(_ service: ObjectIdentifier, _ arguments: ObjectIdentifier) -> UnsafeMutablePointer<Bucket>? {
            let untagged = LookupTable.tagged(arguments, isKeyed: false)
            var position = LookupTable.position(service, untagged, keyHash: 0, multiplier: multiplier, shift: shift)
            while true {
                let bucket = buckets + position
                guard let found = bucket.pointee.service else { return nil }
                if found == service, bucket.pointee.arguments == untagged {
                    return bucket
                }
                position = (position + 1) & mask
            }
        }

        /// The first bucket of (service, arguments) with a key of `keyType` whose hash is `keyHash`: the
        /// bucket of the key, unless another key of the type has the same hash (the caller compares the key,
        /// and on a mismatch probes on with ``bucket(_:_:keyType:keyHash:matches:)``).
        @inline(__always)
        func candidate(
            _ service: ObjectIdentifier, _ arguments: ObjectIdentifier, keyType: ObjectIdentifier, keyHash: Int
        ) -> UnsafeMutablePointer<Bucket>? {
            bucket(service, arguments, keyType: keyType, keyHash: keyHash) { _ in true }
        }

        /// The bucket of (service, arguments, a key of type `keyType`), if the fast path serves it.
        ///
        /// `keyHash` is the key's ``KeyHash``, which is what the table stored for every type without a
        /// custom `AnyHashable` representation; for the others (a `UInt8`, for one), and for a key equal to
        /// the stored one only as `AnyHashable` (an `Int8` and an `Int`), the lookup misses and the caller
        /// goes on to the `AnyHashable` lookup or the locked path. `matches` compares a bucket's ``KeyBox``,
        /// which holds a `keyType`.
        @inline(__always)
        func bucket(
            _ service: ObjectIdentifier, _ arguments: ObjectIdentifier, keyType: ObjectIdentifier, keyHash: Int,
            matches: (UnsafeMutableRawPointer) -> Bool
        ) -> UnsafeMutablePointer<Bucket>? {
            let keyed = LookupTable.tagged(arguments, isKeyed: true)
            var position = LookupTable.position(service, keyed, keyHash: keyHash, multiplier: multiplier, shift: shift)
            while true {
                let bucket = buckets + position
                guard let found = bucket.pointee.service else { return nil }
                if found == service, bucket.pointee.arguments == keyed, bucket.pointee.keyHash == keyHash,
                    bucket.pointee.keyType == keyType, let typedKey = bucket.pointee.typedKey, matches(typedKey)
                {
                    return bucket
                }
                position = (position + 1) & mask
            }
        }
    }
}

/// The hash the lookup table files a key under: for `String` and `Int` keys, the most common, a cheap hash
/// of their own (FNV-1a over the UTF-8 bytes; a multiply), instead of the seeded SipHash of `hashValue`
/// (about 200 instructions for a one-character string); for every other type, `hashValue`.
///
/// Only the lock-free path uses it, and equal keys may hash differently there (`"é"` composed and
/// decomposed, an `Int8` key held as `AnyHashable`): such a lookup misses and the locked path, which
/// compares with `AnyHashable`'s own hashing and `==`, finds the registration. A hit is always decided
/// by `==`.
@usableFromInline
enum KeyHash {
    /// The hash of a key of a concrete type.
    @inlinable @inline(__always)
    static func of<Key: Hashable>(_ key: Key) -> Int {
        if Key.self == String.self { return string(unsafeBitCast(key, to: String.self)) }
        if Key.self == Int.self { return integer(unsafeBitCast(key, to: Int.self)) }
        return key.hashValue
    }

    @inlinable @inline(__always)
    static func string(_ string: String) -> Int {
        func fnv1a(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
            return Int(truncatingIfNeeded: hash)
        }
        if let hash = string.utf8.withContiguousStorageIfAvailable(fnv1a) { return hash }
        var string = string
        return string.withUTF8(fnv1a)
    }

    @inlinable @inline(__always)
    static func integer(_ value: Int) -> Int {
        Int(bitPattern: UInt(bitPattern: value) &* 0x9E37_79B9_7F4A_7C15)
    }
}

/// A key held as `AnyHashable` whose base is a `String` or an `Int` (the most common key types), taken
/// out of the existential so that it is resolved as its own type.
@usableFromInline
enum CommonKey {
    case string(String)
    case integer(Int)

    /// The `String` or `Int` that `base` (a key's `AnyHashable.base`) holds, or nil. A function, not an
    /// initializer: it borrows `base`, where an initializer would take (and so copy) it.
    @usableFromInline
    static func of(_ base: Any) -> CommonKey? {
        func open<Base>(_ base: Base) -> CommonKey? {
            // `Base` is the type compared: the casts only rename it.
            if Base.self == String.self { return .string(unsafeBitCast(base, to: String.self)) }
            if Base.self == Int.self { return .integer(unsafeBitCast(base, to: Int.self)) }
            return nil
        }
        return _openExistential(base, do: open)
    }
}

/// A key as ``ServiceKey`` keeps it (as `AnyHashable`, with its hash computed once) and, in a ``KeyBox``, as
/// its concrete type too, for the lock-free path: a lookup with a key held as `AnyHashable` compares it here.
@usableFromInline
class AnyKeyBox: @unchecked Sendable {  // immutable; see `ServiceKey`'s note on `AnyHashable`
    let key: AnyHashable
    /// `key.hashValue`.
    let hash: Int
    /// The ``KeyInterner/domain`` of the interner that interned this box, or 0: two boxes of one domain hold
    /// equal keys only when they are the same box.
    let domain: UInt

    init(_ key: AnyHashable, hash: Int, domain: UInt = 0) {
        self.key = key
        self.hash = hash
        self.domain = domain
    }

    convenience init(_ key: AnyHashable) {
        let hash = key.hashValue
        self.init(key, hash: hash)
    }

    /// The key's type and the hash the lookup table files it under, for a ``KeyBox``; nil for a box that
    /// holds the key only as `AnyHashable`.
    var lookup: (type: ObjectIdentifier, hash: Int)? { nil }

    /// Whether the key at `base` is this key. `base` points to a value of this box's key type (the
    /// bucket's key type was compared first); false for a box that is not a ``KeyBox``.
    func matches(_ base: UnsafeRawPointer) -> Bool { false }
}

/// A registration key held as its concrete type, so that a lookup compares it with the type's own `==`.
@usableFromInline
final class KeyBox<Key: Hashable>: AnyKeyBox, @unchecked Sendable {  // immutable, as its superclass
    @usableFromInline let value: Key

    /// `key` is `value` as `AnyHashable`, and `hash` its `hashValue`.
    init(_ value: Key, key: AnyHashable, hash: Int) {
        self.value = value
        super.init(key, hash: hash)
    }

    /// A `String` or `Int` key is filed under its own ``KeyHash``; any other under its `AnyHashable`'s hash,
    /// which for some types (a `UInt8`) is not the type's own, so that a typed lookup misses there and the
    /// `AnyHashable` lookup finds it.
    override var lookup: (type: ObjectIdentifier, hash: Int)? {
        (ObjectIdentifier(Key.self), Key.self == String.self || Key.self == Int.self ? KeyHash.of(value) : hash)
    }

    override func matches(_ base: UnsafeRawPointer) -> Bool {
        base.assumingMemoryBound(to: Key.self).pointee == value
    }
}
