/// One box per distinct registration key whose `==` is user code, so that nothing the container's lock guards
/// compares such keys by calling it.
///
/// A key of any type but `String` and `Int` compares with its type's `==`, which is user code: it may resolve
/// from the container, block, or take long. Before a registration, a `provide`, an `unregister`, a locked
/// resolve or anything else with such a key takes the container's lock, its box is exchanged here for the
/// *interned* box of an equal key, comparing with `==` with the registry's lock never held: under it only
/// hashes are compared and arrays copied. Interned boxes carry the interner's
/// ``domain``; ``ServiceKey``'s `==` says two boxes of one domain are equal only when they are the same box, so
/// the registry's dictionaries, the scopes' `locals` and every set of keys compare them by identity.
///
/// A box, once interned, stays until the interner goes (the registry's entries keep every key they have seen
/// too): a key seen once is equal to itself forever after, and no box of a domain can be replaced by an equal
/// one. A lookup that finds no equal key adds none: the key was not registered or provided when it looked.
///
/// The boxes live in the registry (``Registry/internedKeys``, guarded by its lock, which this never holds while a
/// key's `==` runs): a container allocates nothing for them until a key of such a type comes. Validation's
/// throwaway copy of a registry interns in the registry it copies, so that their keys are one domain.
struct KeyInterner {
    /// The registry whose lock guards the boxes, and whose ``Registry/keyDomain`` they carry.
    let owner: Registry

    /// Nonzero, and distinct for every registry the process makes (validation's copies excepted).
    var domain: UInt { owner.keyDomain }

    private nonisolated(unsafe) static let domains = AtomicWord.allocate(count: 1)

    /// A new registry's domain.
    static func nextDomain() -> UInt {
        domains.fetchAdd(1) &+ 1
    }

    /// Whether `box` is to be interned: its key is not already interned here, and its base is not of one of the
    /// standard library's own key types, whose `==` runs no user code (and which `AnyHashable` finds equal
    /// across types: `Int8(3)` is the registration under `3`, so that they cannot be interned apart).
    static func needsInterning(_ box: AnyKeyBox, domain: UInt) -> Bool {
        guard box.domain != domain, box.lookup == nil else { return false }
        let type = ObjectIdentifier(Swift.type(of: box.key.base))
        // A few comparisons: cheaper than hashing the identifier, on every keyed resolve of the locked path.
        return !standardTypes.contains(type)
    }

    /// The standard library's types whose `==` is its own, with no generic parameter that could be user code.
    private static let standardTypes: [ObjectIdentifier] = [
        ObjectIdentifier(String.self), ObjectIdentifier(Substring.self), ObjectIdentifier(Character.self),
        ObjectIdentifier(Bool.self), ObjectIdentifier(Double.self), ObjectIdentifier(Float.self),
        ObjectIdentifier(Int.self), ObjectIdentifier(Int8.self), ObjectIdentifier(Int16.self),
        ObjectIdentifier(Int32.self), ObjectIdentifier(Int64.self), ObjectIdentifier(UInt.self),
        ObjectIdentifier(UInt8.self), ObjectIdentifier(UInt16.self), ObjectIdentifier(UInt32.self),
        ObjectIdentifier(UInt64.self), ObjectIdentifier(ObjectIdentifier.self),
    ]

    /// `key` with its key's box interned: the box of an equal key interned before, or, when there is none and
    /// `adding`, a new box of this domain. Nil when there is none and not `adding`: no registration or
    /// `provide` has used an equal key. `key`'s box must need interning (``Registry/intern(_:adding:)`` returns
    /// any other key as it is). Call without the container's lock: this is where the key's `==` runs.
    func intern(_ key: ServiceKey, box: AnyKeyBox, adding: Bool) -> ServiceKey? {
        guard let interned = intern(box, adding: adding) else { return nil }
        return ServiceKey(service: key.service, arguments: key.arguments, box: interned)
    }

    /// The interned box equal to `box`, as ``intern(_:box:adding:)`` says; `box` must need interning.
    func intern(_ box: AnyKeyBox, adding: Bool) -> AnyKeyBox? {
        var compared = 0
        while true {
            // Copied under the lock (a retain); the boxes are compared after it.
            let candidates = owner.lock.withLock { _ in owner.internedKeys[box.hash] ?? [] }
            for candidate in candidates[compared...] where candidate.key == box.key {
                return candidate
            }
            compared = candidates.count
            guard adding else { return nil }
            let interned: AnyKeyBox? = owner.lock.withLock { _ in
                // Boxes interned meanwhile are compared first.
                guard owner.internedKeys[box.hash]?.count ?? 0 == compared else { return nil }
                let interned = AnyKeyBox(box.key, hash: box.hash, domain: domain)
                owner.internedKeys[box.hash, default: []].append(interned)
                return interned
            }
            if let interned { return interned }
        }
    }
}

extension Registry {
    /// `key` interned (see ``KeyInterner/intern(_:box:adding:)``); a key without a key as it is, at no cost.
    @inline(__always)
    func intern(_ key: ServiceKey, adding: Bool) -> ServiceKey? {
        guard let box = key.keyBox, KeyInterner.needsInterning(box, domain: keyDomain) else { return key }
        return keys.intern(key, box: box, adding: adding)
    }

    /// The box a registration under `key` keeps: a `String` or `Int` key's ``KeyBox`` of its own type, which
    /// the lookup table uses as it is; another standard type's box as it is; any other key's interned box.
    /// Call without the container's lock.
    func registeredBox(for key: consuming AnyHashable?) -> AnyKeyBox? {
        guard let key else { return nil }
        let hash = key.hashValue
        switch CommonKey.of(key.base) {
        case .string(let string)?: return KeyBox(string, key: key, hash: hash)
        case .integer(let integer)?: return KeyBox(integer, key: key, hash: hash)
        case nil:
            let box = AnyKeyBox(key, hash: hash)
            return KeyInterner.needsInterning(box, domain: keyDomain) ? keys.intern(box, adding: true) : box
        }
    }
}
