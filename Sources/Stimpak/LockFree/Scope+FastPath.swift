import CStimpakAtomics

/// The lock-free path: a resolve that finds a published instance or a transient's factory in the registry's
/// published lookup table, inside a read section, without a lock. See ARCHITECTURE.md.
extension Scope {
    /// Finds or makes the instance registered for (`Service`, `Args`) without a key.
    ///
    /// Inlined into the caller, so that it is specialized for `Service` and `Args`. A cached instance, or a
    /// transient's factory, is found lock-free in the published lookup table; anything else (a first
    /// creation, comparators, scope-local values, every error) takes the locked path.
    @inlinable @inline(__always)
    func resolveInstance<Service, Args>(_ type: Service.Type, _ arguments: Args) throws(ResolutionError) -> Service {
        let section = ReadSection.enter(from: self)
        let found = fastPath(ObjectIdentifier(Service.self), ObjectIdentifier(Args.self), in: section)
        return try finish(found, arguments, section: section) { () throws(ResolutionError) in
            try lockAndResolve(Service.self, arguments, key: nil)
        }
    }

    /// Finds or makes the instance registered for (`Service`, `Args`, `key`).
    ///
    /// A `String` or `Int` key is resolved as its own type (``resolveInstance(_:_:typedKey:)``); any other
    /// is compared by the lock-free path as its base's own type (opened from the existential), never with
    /// `AnyHashable`'s `==`. A key equal to the registered one only as `AnyHashable` (an `Int8` and an
    /// `Int`) misses there, and the locked path decides.
    @inlinable
    func resolveInstance<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) throws(ResolutionError) -> Service {
        guard let key else { return try resolveInstance(Service.self, arguments) }
        return try resolveInstance(Service.self, arguments, anyKey: key)
    }

    /// The same for a key that is there: borrowed, so that looking into it copies nothing.
    @inlinable
    func resolveInstance<Service, Args>(
        _ type: Service.Type, _ arguments: Args, anyKey key: AnyHashable
    ) throws(ResolutionError) -> Service {
        let base = key.base
        switch CommonKey.of(base) {
        case .string(let string)?: return try resolveInstance(Service.self, arguments, typedKey: string)
        case .integer(let integer)?: return try resolveInstance(Service.self, arguments, typedKey: integer)
        case nil: break
        }
        // Neither a `String` nor an `Int`: its `KeyHash` is its `AnyHashable`'s hash.
        let keyHash = key.hashValue
        let section = ReadSection.enter(from: self)
        let found = fastPath(ObjectIdentifier(Service.self), ObjectIdentifier(Args.self), keyBase: base, keyHash: keyHash, in: section)
        return try finish(found, arguments, section: section) { () throws(ResolutionError) in
            try lockAndResolve(Service.self, arguments, key: key)
        }
    }

    /// Finds or makes the instance registered for (`Service`, `Args`) and a key of a concrete type.
    ///
    /// Specialized for `Key` in the caller, the lock-free path hashes and compares the key as `Key` (its
    /// ``KeyHash`` and `==`), never building an `AnyHashable`; a miss falls back to the `AnyHashable` path,
    /// which decides (an `Optional` key is unwrapped there, `nil` meaning unkeyed; a key `AnyHashable`
    /// hashes its own way, a `Double`, is found there), or for a `String` or `Int` key, whose `AnyHashable`
    /// lookup would be this one again, to the locked path.
    @inlinable @inline(__always)
    func resolveInstance<Service, Args, Key: Hashable>(
        _ type: Service.Type, _ arguments: Args, typedKey key: Key
    ) throws(ResolutionError) -> Service {
        if Key.self == AnyHashable.self {
            // `Key` is `AnyHashable`: the rebinding only renames the type (and, unlike a cast, copies nothing).
            return try withUnsafePointer(to: key) { (pointer) throws(ResolutionError) -> Service in
                try pointer.withMemoryRebound(to: AnyHashable.self, capacity: 1) { (key) throws(ResolutionError) -> Service in
                    try resolveInstance(Service.self, arguments, anyKey: key.pointee)
                }
            }
        }
        // Hashed before the section: a key's hash may be user code, or long.
        let keyHash = KeyHash.of(key)
        let section = ReadSection.enter(from: self)
        let found = fastPath(Service.self, Args.self, typedKey: key, keyHash: keyHash, in: section)
        return try finish(found, arguments, section: section) { () throws(ResolutionError) in
            try resolveMissed(Service.self, arguments, typedKey: key)
        }
    }

    /// What the lock-free path finds for (`Service`, `Args`) and a key of a concrete type other than
    /// `AnyHashable`, whose ``KeyHash`` is `keyHash`: the first bucket with the key's type and hash, its key compared
    /// here (no closure call on a hit), then the others.
    @inlinable @inline(__always)
    func fastPath<Service, Args, Key: Hashable>(
        _ type: Service.Type, _ arguments: Args.Type, typedKey key: Key, keyHash: Int,
        in section: borrowing ReadSection
    ) -> FastPath {
        let service = ObjectIdentifier(Service.self)
        let keyType = ObjectIdentifier(Key.self)
        guard
            let candidate = keyedCandidate(service, ObjectIdentifier(Args.self), keyType: keyType, keyHash: keyHash, in: section)
        else { return .lockedPath }
        // A bucket of key type `Key` holds a `KeyBox<Key>`.
        func matches(_ typedKey: UnsafeMutableRawPointer) -> Bool {
            Unmanaged<KeyBox<Key>>.fromOpaque(typedKey)._withUnsafeGuaranteedRef { $0.value == key }
        }
        return matches(candidate.typedKey)
            ? candidate.found
            : fastPath(service, ObjectIdentifier(Args.self), keyType: keyType, keyHash: keyHash, matches: matches, in: section)
    }

    /// A resolve with a key of a concrete type that the lock-free path did not serve, called with the section left:
    /// the `AnyHashable` path, which decides (an `Optional` key is unwrapped there, nil meaning unkeyed; a key
    /// `AnyHashable` hashes its own way, a `Double`, is found there), or for a `String` or `Int` key, whose
    /// `AnyHashable` lookup would be the typed one again, the locked path.
    @inlinable @inline(__always)
    func resolveMissed<Service, Args, Key: Hashable>(
        _ type: Service.Type, _ arguments: Args, typedKey key: Key
    ) throws(ResolutionError) -> Service {
        guard let key = Scope.erased(key) else { return try resolveInstance(Service.self, arguments) }
        if Key.self == String.self || Key.self == Int.self {
            return try lockAndResolve(Service.self, arguments, key: key)
        }
        return try resolveInstance(Service.self, arguments, key: key)
    }

    /// `key` as the registry stores keys: an `Optional` unwrapped (nil meaning no key), anything else boxed.
    @usableFromInline
    static func erased<Key: Hashable>(_ key: Key) -> AnyHashable? {
        if let optional = key as? any OptionalKey { return optional.erasedWrapped }
        return AnyHashable(key)
    }

    /// Completes a resolve from what the lock-free path found, leaving the read section.
    ///
    /// What the section found stays allocated only until it is left, so before leaving, the instance is
    /// copied (retained), a transient's registration pushed on the resolution path (which keeps it alive
    /// while its factory runs, without a shared write) and an uncreated one's retained (see ARCHITECTURE.md).
    @inlinable @inline(__always)
    func finish<Service, Args>(
        _ found: FastPath, _ arguments: Args, section: consuming ReadSection,
        orLockedPath lockedPath: () throws(ResolutionError) -> Service
    ) throws(ResolutionError) -> Service {
        switch found {
        case .cached(let box):
            // The route was chosen for (`Service`, `Args`), so the box holds a `Service`.
            return section.leave(copying: box, as: Service.self)
        case .weak(let word):
            // Loading a weak reference retains what it finds alive: inside the section, as required.
            let object = Scope.loadWeak(word, in: section)
            section.leave()
            // Unwrapped before the cast: specialized for a class `Service`, `as?` from `AnyObject?` is
            // a bare `swift_dynamicCastClass`, which dereferences a nil (a dead instance) on Linux.
            if let object, let instance = object as? Service { return instance }
        case .transient(let registration):
            let thread = section.thread
            let status = section.leave(pushing: registration, for: self)
            // Too deep: not pushed, so not protected; the locked path holds it and reports the error.
            if status != 2 {
                return try makeTransient(registration, isCycle: status == 1, arguments, thread: thread)
            }
        case .uncreated(let registration, let generation):
            let resolver = section.leave(pinning: registration, as: ServiceResolver<Service, Args>.self)
            return try resolveUncreated(resolver, arguments, generation: generation)
        case .lockedPath:
            section.leave()
        }
        // One call of `lockedPath` (inlined), whatever sent the resolve there: the section is left.
        return try lockedPath()
    }

    /// Where the lock-free path found the unkeyed (`service`, `arguments`): a published instance, a
    /// transient registration, or nothing it can serve. Call inside a read section: the pointers are valid
    /// until it ends.
    ///
    /// Inlined into the resolve, so that the caller's code switches once on the bucket's route, where a call
    /// would return a ``FastPath`` to switch on again (the scoped routes are one call, ``scopedBoxBits(_:)``).
    @inlinable @inline(__always)
    func fastPath(_ service: ObjectIdentifier, _ arguments: ObjectIdentifier, in section: borrowing ReadSection) -> FastPath {
        guard let table = publishedTable(in: section) else { return .lockedPath }
        return fastPath(table.bucket(service, arguments), generation: table.generation, in: section)
    }

    /// The same for a keyed registration, the key's base given as `Any` (a key held as `AnyHashable`):
    /// opened as its own type and compared by the bucket's ``KeyBox``.
    @usableFromInline
    func fastPath(
        _ service: ObjectIdentifier, _ arguments: ObjectIdentifier, keyBase: Any, keyHash: Int, in section: borrowing ReadSection
    ) -> FastPath {
        guard let table = publishedTable(in: section) else { return .lockedPath }
        func find<Base>(_ base: Base) -> UnsafeMutablePointer<LookupTable.Bucket>? {
            withUnsafePointer(to: base) { pointer in
                table.bucket(service, arguments, keyType: ObjectIdentifier(Base.self), keyHash: keyHash) { box in
                    Unmanaged<AnyKeyBox>.fromOpaque(box)._withUnsafeGuaranteedRef { $0.matches(pointer) }
                }
            }
        }
        return fastPath(_openExistential(keyBase, do: find), generation: table.generation, in: section)
    }

    /// The first keyed bucket of (`service`, `arguments`) with `keyType` and `keyHash` (see
    /// ``LookupTable/Probe/candidate(_:_:keyType:keyHash:)``), or nil: its key for the caller to compare, and
    /// what the lock-free path found there, which serves the resolve when the key is equal (one call, not
    /// two, on a hit). Call inside a read section.
    @usableFromInline
    func keyedCandidate(
        _ service: ObjectIdentifier, _ arguments: ObjectIdentifier, keyType: ObjectIdentifier, keyHash: Int,
        in section: borrowing ReadSection
    ) -> KeyedCandidate? {
        guard let table = publishedTable(in: section),
            let bucket = table.candidate(service, arguments, keyType: keyType, keyHash: keyHash),
            let typedKey = bucket.pointee.typedKey
        else { return nil }
        return KeyedCandidate(typedKey: typedKey, found: fastPath(bucket, generation: table.generation, in: section))
    }

    /// The same for a key of a concrete type, compared by `matches` (see ``LookupTable/Probe/bucket(_:_:keyType:keyHash:matches:)``).
    @usableFromInline
    func fastPath(
        _ service: ObjectIdentifier, _ arguments: ObjectIdentifier, keyType: ObjectIdentifier, keyHash: Int,
        matches: (UnsafeMutableRawPointer) -> Bool, in section: borrowing ReadSection
    ) -> FastPath {
        guard let table = publishedTable(in: section) else { return .lockedPath }
        return fastPath(
            table.bucket(service, arguments, keyType: keyType, keyHash: keyHash, matches: matches),
            generation: table.generation, in: section)
    }

    /// The registry's published table's memory, or nil when this scope is disposed or none is published.
    /// Call inside a read section: the memory stays allocated until it ends.
    @inlinable @inline(__always)
    func publishedTable(in section: borrowing ReadSection) -> LookupTable.Probe? {
        guard disposedWord.load() == 0 else { return nil }
        return registryTableWord.withPublished(LookupTable.self) { $0.probe }
    }

    @inlinable @inline(__always)
    func fastPath(
        _ bucket: UnsafeMutablePointer<LookupTable.Bucket>?, generation: Int, in section: borrowing ReadSection
    ) -> FastPath {
        guard let bucket else { return .lockedPath }
        let boxBits: UInt
        // Only a `.provided` bucket lacks a registration and a root word: unwrapped unchecked in the others.
        switch bucket.pointee.route {
        case .transient:
            return .transient(bucket.pointee.registration.unsafelyUnwrapped.toOpaque())
        case .root:
            boxBits = bucket.pointee.rootWord.unsafelyUnwrapped.load()
        case .scoped, .provided:
            guard let bits = scopedBoxBits(bucket, in: section) else { return .lockedPath }
            boxBits = bits
        case .weakRoot:
            // Loaded by the caller, out of line: a call here would cost every lookup its saved registers.
            return .weak(bucket.pointee.rootWord.unsafelyUnwrapped)
        }
        if let box = UnsafeMutableRawPointer(bitPattern: boxBits) { return .cached(box) }
        // Nil only for a `.provided` bucket: what it does not find goes to the locked path.
        guard let registration = bucket.pointee.registration else { return .lockedPath }
        return .uncreated(registration.toOpaque(), generation: generation)
    }

    /// Where a `.scoped` or `.provided` bucket's instance is published for this scope: its word's bits (0 when
    /// none is yet), or nil when the locked path decides. Out of line: it reads this scope's published table.
    @usableFromInline
    func scopedBoxBits(_ bucket: UnsafeMutablePointer<LookupTable.Bucket>, in section: borrowing ReadSection) -> UInt? {
        guard parent != nil else {
            // Inside a factory, the locked path checks that no singleton captures the root's instance;
            // the root publishes no provided value.
            guard bucket.pointee.route == .scoped, stimpak_thread_get().pointee.depth == 0 else { return nil }
            return bucket.pointee.rootWord?.load() ?? 0
        }
        return tableBoxBits(bucket.pointee.index, in: section)
    }

    /// The bits of the instance this child scope's table publishes at `index` (0 when none is): a `.scoped`
    /// resolve's, and a bound provider's. Call inside a read section.
    @usableFromInline
    func tableBoxBits(_ index: Int, in section: borrowing ReadSection) -> UInt {
        // A thread other than the opener marks the scope's table as read by others before it loads it (a seq-cst
        // store before the seq-cst load), so that the scope's disposal scans the readers from then on.
        let sole = soleReaderWord.loadRelaxed()
        if sole != UInt(bitPattern: section.thread), sole != Scope.sharedReaders { soleReaderWord.store(Scope.sharedReaders) }
        return tableWord.withPublished(ScopeTable.self) { $0.box(for: index) } ?? 0
    }

    /// The live instance of a `.weak` registration's ``WeakBox`` published in `word`, retained (call inside
    /// the read section that found the word), or nil when it is gone or none is published.
    ///
    /// Called as `Scope.loadWeak`, not `Self.loadWeak`, from the inlined resolve path: a use of the dynamic
    /// `Self` there keeps the `async` resolve from being inlined into its caller, which then pays an async
    /// frame and an executor check on every cached hit.
    @usableFromInline @inline(never)
    static func loadWeak(_ word: AtomicWord, in section: borrowing ReadSection) -> AnyObject? {
        word.withPublished(WeakBox.self) { $0.object } ?? nil
    }

    /// Calls the factory of a transient registration that the read section pushed on this thread's
    /// resolution path, which keeps the registration alive until it is popped here; or, when the push
    /// found it on the path already (`isCycle`, and then that earlier push keeps it alive), throws the cycle.
    @inlinable @inline(__always)
    func makeTransient<Service, Args>(
        _ registration: UnsafeMutableRawPointer, isCycle: Bool, _ arguments: Args,
        thread: UnsafeMutablePointer<stimpak_thread_state>
    ) throws(ResolutionError) -> Service {
        // The table's key holds both type identities, so this is the registration's type.
        let resolver = Unmanaged<ServiceResolver<Service, Args>>.fromOpaque(registration)
        if isCycle { throw ResolutionContext.current.pathError(.dependencyCycle, resolver.takeUnretainedValue()) }
        defer { ResolutionContext.leave(thread) }
        let instance: Service
        do {
            instance = try resolver._withUnsafeGuaranteedRef { try $0.factory(self, arguments) }
        } catch {
            throw factoryFailure(error, of: resolver._withUnsafeGuaranteedRef { $0.serviceKey }, context: .current)
        }
        guard resolver._withUnsafeGuaranteedRef({ $0.isDisposableTransient(instance) }) else { return instance }
        return try admitDisposableTransient(instance, of: resolver.takeUnretainedValue())
    }
}

/// What the lock-free path found for a resolve.
@usableFromInline
enum FastPath {
    /// A published instance: its word's bits, an unretained instance or box (see ``CachedInstance``).
    case cached(UnsafeMutableRawPointer)
    /// A transient registration without callbacks: an unretained `ServiceResolver<Service, Args>`.
    case transient(UnsafeMutableRawPointer)
    /// A reused registration (an unretained `ServiceResolver<Service, Args>`) whose instance this scope
    /// has not published yet, found in the table of the registry's `generation`.
    case uncreated(UnsafeMutableRawPointer, generation: Int)
    /// A `.weak` registration's root word, whose ``WeakBox`` the caller loads inside the read section (a
    /// nil instance goes to the locked path, which makes a new one).
    case weak(AtomicWord)
    /// Nothing the lock-free path can serve: the locked path decides.
    case lockedPath
}

/// A keyed bucket whose key the caller compares (see ``Scope/keyedCandidate(_:_:keyType:keyHash:)``):
/// valid until the read section it was found in ends.
@usableFromInline
struct KeyedCandidate {
    /// The bucket's unretained ``KeyBox``.
    @usableFromInline let typedKey: UnsafeMutableRawPointer
    /// What the lock-free path found in the bucket: the resolve's route when the key is equal.
    @usableFromInline let found: FastPath
}

/// An `Optional` used as a key: `resolve(Foo.self, key: name)` with `name: String?` means the key `name!`,
/// or no key, as it does when the key is passed as `AnyHashable?`.
@usableFromInline
protocol OptionalKey {
    var erasedWrapped: AnyHashable? { get }
}

extension Optional: OptionalKey where Wrapped: Hashable {
    @usableFromInline
    var erasedWrapped: AnyHashable? { flatMap { Scope.erased($0) } }
}

extension Scope {
    /// The synchronous attempt of an unkeyed `await` resolve: the synchronous resolve, specialized in the caller but
    /// kept out of line (inlined whole, with a transient's factory call, it makes an `async` resolve too large for
    /// the optimizer to inline into its caller, which then pays an async frame per resolve).
    ///
    /// It serves an `await` (the thread state's `serves_await`, read only where a resolve would wait for another
    /// thread's creation, see ``ResolutionContext/servesAwait``): such a wait is handed back as an awaitable
    /// `requiresAwait`, and the task suspends on it in ``resolveAwaiting(_:_:key:after:from:)`` instead of blocking.
    /// When the lock-free path finds an `async` registration's instance not made yet, it returns nil with the
    /// registration, retained, and the generation of the table it was found in, for
    /// ``resolveUncreatedAwaiting(_:_:generation:)``: no locked attempt that can only fail, no error thrown to say so.
    @inlinable @inline(never)
    func resolveInstanceServingAwait<Service, Args>(
        _ type: Service.Type, _ arguments: Args, uncreated: inout Unmanaged<ServiceResolver<Service, Args>>?,
        generation: inout Int
    ) throws(ResolutionError) -> Service? {
        let state = stimpak_thread_get()
        state.pointee.serves_await = 1
        defer { state.pointee.serves_await = 0 }
        let section = ReadSection.enter(from: self)
        let found = fastPath(ObjectIdentifier(Service.self), ObjectIdentifier(Args.self), in: section)
        // Not inside a synchronous factory on this thread (a task run at once there), which cannot await: that
        // resolve's locked path says so.
        if case .uncreated(let registration, let foundGeneration) = found, state.pointee.depth == 0,
            Unmanaged<ServiceResolver<Service, Args>>.fromOpaque(registration)._withUnsafeGuaranteedRef({ $0.isAsync })
        {
            // Retained (the caller takes it), unmanaged: a resolve that finds an instance releases no nil reference.
            uncreated = Unmanaged<ServiceResolver<Service, Args>>.fromOpaque(registration).retain()
            section.leave()
            generation = foundGeneration
            return nil
        }
        return try finish(found, arguments, section: section) { () throws(ResolutionError) in
            try lockAndResolve(Service.self, arguments, key: nil)
        }
    }

    /// The synchronous attempt of an `await` resolve with an `AnyHashable` key, and of `resolveAwaiting`'s retries
    /// (see ``resolveInstanceServingAwait(_:_:uncreated:generation:)``).
    @inlinable @inline(never)
    func resolveInstanceNotInlined<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) throws(ResolutionError) -> Service {
        let state = stimpak_thread_get()
        state.pointee.serves_await = 1
        defer { state.pointee.serves_await = 0 }
        return try resolveInstance(Service.self, arguments, key: key)
    }

    /// ``resolveInstanceServingAwait(_:_:uncreated:generation:)`` with a key of a concrete type: an `async`
    /// registration's uncreated instance that the typed-key lookup finds goes to
    /// ``resolveUncreatedAwaiting(_:_:generation:)`` as the unkeyed form's does. A key the typed lookup does not
    /// find (an `Optional`, a number that `AnyHashable` files under another type, `AnyHashable` itself) makes the
    /// synchronous attempt, which hands the slot it finds over. Written out as the unkeyed form is: a shared in-line
    /// function taking the lookup as a closure makes an `await` of a cached instance cost about 40 instructions more.
    @inlinable @inline(never)
    func resolveInstanceServingAwait<Service, Args, Key: Hashable>(
        _ type: Service.Type, _ arguments: Args, typedKey key: Key,
        uncreated: inout Unmanaged<ServiceResolver<Service, Args>>?, generation: inout Int
    ) throws(ResolutionError) -> Service? {
        let state = stimpak_thread_get()
        state.pointee.serves_await = 1
        defer { state.pointee.serves_await = 0 }
        if Key.self == AnyHashable.self { return try resolveInstance(Service.self, arguments, typedKey: key) }
        let keyHash = KeyHash.of(key)
        let section = ReadSection.enter(from: self)
        let found = fastPath(Service.self, Args.self, typedKey: key, keyHash: keyHash, in: section)
        if case .uncreated(let registration, let foundGeneration) = found, state.pointee.depth == 0,
            Unmanaged<ServiceResolver<Service, Args>>.fromOpaque(registration)._withUnsafeGuaranteedRef({ $0.isAsync })
        {
            uncreated = Unmanaged<ServiceResolver<Service, Args>>.fromOpaque(registration).retain()
            section.leave()
            generation = foundGeneration
            return nil
        }
        return try finish(found, arguments, section: section) { () throws(ResolutionError) in
            try resolveMissed(Service.self, arguments, typedKey: key)
        }
    }
}
