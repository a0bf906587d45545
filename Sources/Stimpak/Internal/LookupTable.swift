/// An immutable snapshot of the registrations that the lock-free resolve path can serve, published by
/// the ``Registry`` and read inside a read section (see ARCHITECTURE.md).
///
/// Open addressing over raw memory, hashed on the two type identities (and the key's hash when there is
/// one), so that a lookup neither hashes with SipHash for unkeyed services nor touches a reference count.
/// Registrations the fast path can't serve (callbacks, comparators, scope-local values) are left out:
/// a miss sends the resolve to the locked path, which knows everything.
final class LookupTable {
    /// What the fast path does with a registration.
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

    struct Bucket {
        /// nil marks an empty bucket.
        var service: ObjectIdentifier?
        var arguments: ObjectIdentifier
        /// The key and its hash; `key` is only read when `isKeyed`, so that unkeyed lookups never touch an
        /// `AnyHashable` (whose every copy is a runtime call).
        var isKeyed: Bool
        var keyHash: Int
        var key: AnyHashable?
        /// The type of the key's base and an unretained ``KeyBox`` of it, for lookups with a concrete key
        /// type that compare without going through `AnyHashable`; nil when the key isn't `Hashable`-openable.
        var keyType: ObjectIdentifier?
        var typedKey: UnsafeMutableRawPointer?
        var registration: Unmanaged<AnyObject>?
        var route: Route
        var index: Int
        var rootWord: AtomicWord?
    }

    let mask: Int
    let buckets: UnsafeMutablePointer<Bucket>
    /// The registry's generation when the table was built (see ``Registry/generation``).
    let generation: Int
    /// Keeps the registrations and typed keys the buckets point to alive.
    private let registrations: [any Registration]
    private let typedKeys: [AnyObject]

    init(_ entries: [ServiceKey: Registry.Entry], generation: Int) {
        self.generation = generation
        var registrations: [any Registration] = []
        var provided: [(ServiceKey, Registry.Entry)] = []
        for (key, entry) in entries {
            if entry.hasScopeLocals {
                provided.append((key, entry))
            } else if let registration = entry.registration, registration.route != nil {
                registrations.append(registration)
            }
        }
        var capacity = 8
        while capacity < (registrations.count + provided.count) * 2 { capacity *= 2 }
        mask = capacity - 1
        buckets = .allocate(capacity: capacity)
        let empty = Bucket(
            service: nil, arguments: ObjectIdentifier(Void.self), isKeyed: false, keyHash: 0, key: nil,
            keyType: nil, typedKey: nil, registration: nil, route: .transient, index: 0, rootWord: nil)
        buckets.initialize(repeating: empty, count: capacity)
        var typedKeys: [AnyObject] = []
        for registration in registrations {
            guard let route = registration.route else { continue }
            Self.insert(
                registration.serviceKey, registration: Unmanaged.passUnretained(registration), route: route,
                index: registration.index, rootWord: registration.rootWord, into: buckets, mask: mask,
                typedKeys: &typedKeys)
        }
        for (serviceKey, entry) in provided {
            Self.insert(
                serviceKey, registration: nil, route: .provided, index: entry.localsIndex, rootWord: nil,
                into: buckets, mask: mask, typedKeys: &typedKeys)
        }
        self.registrations = registrations
        self.typedKeys = typedKeys
    }

    /// Puts a bucket for `serviceKey` in the first free position of its probe sequence; keeps its typed key
    /// alive in `typedKeys`. Only during `init`.
    private static func insert(
        _ serviceKey: ServiceKey, registration: Unmanaged<AnyObject>?, route: Route, index: Int, rootWord: AtomicWord?,
        into buckets: UnsafeMutablePointer<Bucket>, mask: Int, typedKeys: inout [AnyObject]
    ) {
        let service = ObjectIdentifier(serviceKey.service)
        let arguments = ObjectIdentifier(serviceKey.arguments)
        let key = serviceKey.key
        let keyHash = key?.hashValue ?? 0
        let opened = key.flatMap(Self.typed)
        if let opened { typedKeys.append(opened.box) }
        var position = hash(service, arguments, keyHash: keyHash) & mask
        while buckets[position].service != nil { position = (position + 1) & mask }
        buckets[position] = Bucket(
            service: service, arguments: arguments, isKeyed: key != nil, keyHash: keyHash, key: key,
            keyType: opened?.type, typedKey: opened.map { Unmanaged.passUnretained($0.box).toOpaque() },
            registration: registration, route: route, index: index, rootWord: rootWord)
    }

    /// The key's base opened as its concrete `Hashable` type: that type's identity and a box holding it.
    private static func typed(_ key: AnyHashable) -> (type: ObjectIdentifier, box: AnyObject)? {
        func open<Key: Hashable>(_ key: Key) -> (type: ObjectIdentifier, box: AnyObject) {
            (ObjectIdentifier(Key.self), KeyBox(key))
        }
        guard let base = key.base as? any Hashable else { return nil }
        return open(base)
    }

    deinit {
        buckets.deinitialize(count: mask + 1)
        buckets.deallocate()
    }

    /// Mixes the type identities' addresses and the key's hash (0 without a key) into a bucket position.
    @inline(__always)
    static func hash(_ service: ObjectIdentifier, _ arguments: ObjectIdentifier, keyHash: Int) -> Int {
        var bits = UInt(bitPattern: service) ^ (UInt(bitPattern: arguments) &* 0x9E37_79B9_7F4A_7C15)
        bits ^= UInt(bitPattern: keyHash)
        bits = (bits ^ (bits >> 29)) &* 0xBF58_476D_1CE4_E5B9
        return Int(bitPattern: bits ^ (bits >> 32))
    }

    /// The bucket of the unkeyed (service, arguments), if the fast path serves it.
    @inline(__always)
    func bucket(_ service: ObjectIdentifier, _ arguments: ObjectIdentifier) -> UnsafeMutablePointer<Bucket>? {
        var position = Self.hash(service, arguments, keyHash: 0) & mask
        while true {
            let bucket = buckets + position
            guard let found = bucket.pointee.service else { return nil }
            if found == service, bucket.pointee.arguments == arguments, !bucket.pointee.isKeyed {
                return bucket
            }
            position = (position + 1) & mask
        }
    }

    /// The bucket of (service, arguments, key), whose hash is `keyHash`, if the fast path serves it.
    func bucket(
        _ service: ObjectIdentifier, _ arguments: ObjectIdentifier, key: AnyHashable, keyHash: Int
    ) -> UnsafeMutablePointer<Bucket>? {
        var position = Self.hash(service, arguments, keyHash: keyHash) & mask
        while true {
            let bucket = buckets + position
            guard let found = bucket.pointee.service else { return nil }
            if found == service, bucket.pointee.arguments == arguments, bucket.pointee.isKeyed,
               bucket.pointee.keyHash == keyHash {
                // The stored key's own type compares first; `AnyHashable`'s `==` only when the types differ.
                if let typedKey = bucket.pointee.typedKey {
                    switch Unmanaged<AnyKeyBox>.fromOpaque(typedKey)._withUnsafeGuaranteedRef({ $0.matches(key) }) {
                    case true?: return bucket
                    case false?: break
                    case nil: if bucket.pointee.key == key { return bucket }
                    }
                } else if bucket.pointee.key == key {
                    return bucket
                }
            }
            position = (position + 1) & mask
        }
    }

    /// The bucket of (service, arguments, a key of a concrete type), if the fast path serves it.
    ///
    /// `keyHash` is the key's own `hashValue`, which is what `AnyHashable` hashes for every type without
    /// a custom `AnyHashable` representation; for the others (floating point, for one) the lookup misses
    /// and the caller falls back to the `AnyHashable` lookup. `matches` compares a bucket's ``KeyBox``.
    func bucket(
        _ service: ObjectIdentifier, _ arguments: ObjectIdentifier, keyType: ObjectIdentifier, keyHash: Int,
        matches: (UnsafeMutableRawPointer) -> Bool
    ) -> UnsafeMutablePointer<Bucket>? {
        var position = Self.hash(service, arguments, keyHash: keyHash) & mask
        while true {
            let bucket = buckets + position
            guard let found = bucket.pointee.service else { return nil }
            if found == service, bucket.pointee.arguments == arguments, bucket.pointee.keyHash == keyHash,
               bucket.pointee.keyType == keyType, let typedKey = bucket.pointee.typedKey, matches(typedKey) {
                return bucket
            }
            position = (position + 1) & mask
        }
    }
}

/// A registration key with its type erased, for a lookup with a key held as `AnyHashable`.
@usableFromInline
class AnyKeyBox {
    /// Whether `key` is this key: nil when its base is of another type (then only `AnyHashable`'s `==`,
    /// which equates some values of different types, such as numbers, can tell).
    func matches(_ key: AnyHashable) -> Bool? { nil }
}

/// A registration key held as its concrete type, so that a lookup with a key of that type compares it
/// with the type's own `==`.
@usableFromInline
final class KeyBox<Key: Hashable>: AnyKeyBox {
    @usableFromInline let value: Key

    init(_ value: Key) {
        self.value = value
    }

    override func matches(_ key: AnyHashable) -> Bool? {
        // The base opened as its own type and compared when that is `Key`: no cast, no metadata lookup, far
        // cheaper than `AnyHashable`'s `==`, which unboxes through generic metadata.
        func compare<Base>(_ base: Base) -> Bool? {
            guard ObjectIdentifier(Base.self) == ObjectIdentifier(Key.self) else { return nil }
            // `Base` is `Key`: the cast only renames the type.
            return unsafeBitCast(base, to: Key.self) == value
        }
        return _openExistential(key.base, do: compare)
    }
}
