import CStimpakAtomics

/// The resolve path. See ARCHITECTURE.md for the sketch.
extension Scope {
    /// Finds or makes the instance registered for (`Service`, `Args`) without a key.
    ///
    /// Inlined into the caller, so that it is specialized for `Service` and `Args`. A cached instance, or a
    /// transient's factory, is found lock-free in the published lookup table; anything else (a first
    /// creation, comparators, scope-local values, every error) takes the locked path.
    @inlinable @inline(__always)
    func resolveInstance<Service, Args>(_ type: Service.Type, _ arguments: Args) throws(ResolutionError) -> Service {
        let section = ReadSection.enter()
        let found = fastPath(ObjectIdentifier(Service.self), ObjectIdentifier(Args.self))
        return try finish(found, arguments, section: section) { () throws(ResolutionError) in
            try resolveLocked(Service.self, arguments, key: nil)
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
        let section = ReadSection.enter()
        let found = fastPath(ObjectIdentifier(Service.self), ObjectIdentifier(Args.self), keyBase: base, keyHash: keyHash)
        return try finish(found, arguments, section: section) { () throws(ResolutionError) in
            try resolveLocked(Service.self, arguments, key: key)
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
        let keyHash = KeyHash.of(key)
        let service = ObjectIdentifier(Service.self)
        let keyType = ObjectIdentifier(Key.self)
        let section = ReadSection.enter()
        // The first bucket with the key's type and hash, its key compared here (no closure call on a hit).
        var found = FastPath.locked
        if let candidate = keyedCandidate(service, ObjectIdentifier(Args.self), keyType: keyType, keyHash: keyHash) {
            // A bucket of key type `Key` holds a `KeyBox<Key>`.
            func matches(_ typedKey: UnsafeMutableRawPointer) -> Bool {
                Unmanaged<KeyBox<Key>>.fromOpaque(typedKey)._withUnsafeGuaranteedRef { $0.value == key }
            }
            found = matches(candidate.typedKey)
                ? candidate.found
                : fastPath(service, ObjectIdentifier(Args.self), keyType: keyType, keyHash: keyHash, matches: matches)
        }
        return try finish(found, arguments, section: section) { () throws(ResolutionError) in
            guard let key = Scope.erased(key) else { return try resolveInstance(Service.self, arguments) }
            if Key.self == String.self || Key.self == Int.self {
                return try resolveLocked(Service.self, arguments, key: key)
            }
            return try resolveInstance(Service.self, arguments, key: key)
        }
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
        _ found: FastPath, _ arguments: Args, section: ReadSection,
        orLocked locked: () throws(ResolutionError) -> Service
    ) throws(ResolutionError) -> Service {
        switch found {
        case .cached(let box):
            // The route was chosen for (`Service`, `Args`), so the box holds a `Service`.
            return section.leave(copying: box, as: Service.self)
        case .weak(let word):
            // Loading a weak reference retains what it finds alive: inside the section, as required.
            let object = Scope.loadWeak(word)
            section.leave()
            // Unwrapped before the cast: specialized for a class `Service`, `as?` from `AnyObject?` became
            // a bare `swift_dynamicCastClass`, which dereferences a nil (a dead instance) on Linux.
            if let object, let instance = object as? Service { return instance }
        case .transient(let registration):
            let status = section.leave(pushing: registration)
            // Too deep: not pushed, so not protected; the locked path holds it and reports the error.
            if status != 2 {
                return try makeTransient(registration, isCycle: status == 1, arguments, thread: section.thread)
            }
        case .uncreated(let registration, let generation):
            let resolver = section.leave(pinning: registration, as: ServiceResolver<Service, Args>.self)
            return try resolveUncreated(resolver, arguments, generation: generation)
        case .locked:
            section.leave()
        }
        // One call of `locked` (inlined), whatever sent the resolve there: the section is left.
        return try locked()
    }

    /// Where the lock-free path found the unkeyed (`service`, `arguments`): a published instance, a
    /// transient registration, or nothing it can serve. Call inside a read section: the pointers are valid
    /// until it ends.
    ///
    /// Inlined into the resolve, so that the caller's code switches once on the bucket's route, where a call
    /// returned a ``FastPath`` to switch on again (the scoped routes are one call, ``scopedBoxBits(_:)``).
    @inlinable @inline(__always)
    func fastPath(_ service: ObjectIdentifier, _ arguments: ObjectIdentifier) -> FastPath {
        guard let table = publishedTable() else { return .locked }
        return fastPath(table.bucket(service, arguments), generation: table.generation)
    }

    /// The same for a keyed registration, the key's base given as `Any` (a key held as `AnyHashable`):
    /// opened as its own type and compared by the bucket's ``KeyBox``.
    @usableFromInline
    func fastPath(_ service: ObjectIdentifier, _ arguments: ObjectIdentifier, keyBase: Any, keyHash: Int) -> FastPath {
        guard let table = publishedTable() else { return .locked }
        func find<Base>(_ base: Base) -> UnsafeMutablePointer<LookupTable.Bucket>? {
            withUnsafePointer(to: base) { pointer in
                table.bucket(service, arguments, keyType: ObjectIdentifier(Base.self), keyHash: keyHash) { box in
                    Unmanaged<AnyKeyBox>.fromOpaque(box)._withUnsafeGuaranteedRef { $0.matches(pointer) }
                }
            }
        }
        return fastPath(_openExistential(keyBase, do: find), generation: table.generation)
    }

    /// The first keyed bucket of (`service`, `arguments`) with `keyType` and `keyHash` (see
    /// ``LookupTable/Probe/candidate(_:_:keyType:keyHash:)``), or nil: its key for the caller to compare, and
    /// what the lock-free path found there, which serves the resolve when the key is equal (one call, not
    /// two, on a hit). Call inside a read section.
    @usableFromInline
    func keyedCandidate(
        _ service: ObjectIdentifier, _ arguments: ObjectIdentifier, keyType: ObjectIdentifier, keyHash: Int
    ) -> KeyedCandidate? {
        guard let table = publishedTable(),
              let bucket = table.candidate(service, arguments, keyType: keyType, keyHash: keyHash),
              let typedKey = bucket.pointee.typedKey
        else { return nil }
        return KeyedCandidate(typedKey: typedKey, found: fastPath(bucket, generation: table.generation))
    }

    /// The same for a key of a concrete type, compared by `matches` (see ``LookupTable/Probe/bucket(_:_:keyType:keyHash:matches:)``).
    @usableFromInline
    func fastPath(
        _ service: ObjectIdentifier, _ arguments: ObjectIdentifier, keyType: ObjectIdentifier, keyHash: Int,
        matches: (UnsafeMutableRawPointer) -> Bool
    ) -> FastPath {
        guard let table = publishedTable() else { return .locked }
        return fastPath(
            table.bucket(service, arguments, keyType: keyType, keyHash: keyHash, matches: matches),
            generation: table.generation)
    }

    /// The registry's published table's memory, or nil when this scope is disposed or none is published.
    /// Call inside a read section: the memory stays allocated until it ends.
    @inlinable @inline(__always)
    func publishedTable() -> LookupTable.Probe? {
        guard disposedWord.load() == 0 else { return nil }
        return registry.tableWord.withPublished(LookupTable.self) { $0.probe }
    }

    @inlinable @inline(__always)
    func fastPath(_ bucket: UnsafeMutablePointer<LookupTable.Bucket>?, generation: Int) -> FastPath {
        guard let bucket else { return .locked }
        let boxBits: UInt
        // Only a `.provided` bucket lacks a registration and a root word: unwrapped unchecked in the others.
        switch bucket.pointee.route {
        case .transient:
            return .transient(bucket.pointee.registration.unsafelyUnwrapped.toOpaque())
        case .root:
            boxBits = bucket.pointee.rootWord.unsafelyUnwrapped.load()
        case .scoped, .provided:
            guard let bits = scopedBoxBits(bucket) else { return .locked }
            boxBits = bits
        case .weakRoot:
            // Loaded by the caller, out of line: a call here would cost every lookup its saved registers.
            return .weak(bucket.pointee.rootWord.unsafelyUnwrapped)
        }
        if let box = UnsafeMutableRawPointer(bitPattern: boxBits) { return .cached(box) }
        // Nil only for a `.provided` bucket: what it does not find goes to the locked path.
        guard let registration = bucket.pointee.registration else { return .locked }
        return .uncreated(registration.toOpaque(), generation: generation)
    }

    /// Where a `.scoped` or `.provided` bucket's instance is published for this scope: its word's bits (0 when
    /// none is yet), or nil when the locked path decides. Out of line: it reads this scope's published table.
    @usableFromInline
    func scopedBoxBits(_ bucket: UnsafeMutablePointer<LookupTable.Bucket>) -> UInt? {
        guard parent != nil else {
            // Inside a factory, the locked path checks that no singleton captures the root's instance;
            // the root publishes no provided value.
            guard bucket.pointee.route == .scoped, stimpak_thread_get().pointee.depth == 0 else { return nil }
            return bucket.pointee.rootWord?.load() ?? 0
        }
        let index = bucket.pointee.index
        return tableWord.withPublished(ScopeTable.self) { $0.box(for: index) } ?? 0
    }

    /// The live instance of a `.weak` registration's ``WeakBox`` published in `word`, retained (call inside
    /// the read section that found the word), or nil when it is gone or none is published.
    ///
    /// Called as `Scope.loadWeak`, not `Self.loadWeak`, from the inlined resolve path: a use of the dynamic
    /// `Self` there kept the `async` resolve from being inlined into its caller, which then paid an async
    /// frame and an executor check on every cached hit (three times the synchronous resolve).
    @usableFromInline @inline(never)
    static func loadWeak(_ word: AtomicWord) -> AnyObject? {
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

    /// Hands out, or has this scope track, or disposes and refuses a `Disposable` instance of a transient,
    /// as its registration says. Called with the lock released.
    @usableFromInline
    func admitDisposableTransient<Service, Args>(
        _ instance: Service, of resolver: ServiceResolver<Service, Args>
    ) throws(ResolutionError) -> Service {
        try admitDisposableTransient(instance, of: resolver, layers: nil)
    }

    /// The same for a decorated instance, whose disposal includes the `layers` under it.
    func admitDisposableTransient<Service, Args>(
        _ instance: Service, of resolver: ServiceResolver<Service, Args>, layers: [InstanceDisposal]?
    ) throws(ResolutionError) -> Service {
        registry.lock.lock()
        switch resolver.disposableTransients {
        case .allowed:
            registry.lock.unlock()
            return instance
        case .tracked:
            let record = DisposalRecord.of(
                instance, of: resolver, slot: nil, onDispose: resolver.onDispose, layers: layers)
            guard !isDisposedValue else {
                registry.lock.unlock()
                try? record?.dispose()
                throw failure(.scopeDisposed, resolver.serviceKey, scopeKey: key)
            }
            if let record { disposals.append(record) }
            registry.lock.unlock()
            return instance
        case .refused:
            registry.lock.unlock()
            // Made here and refused here: nothing else would dispose it.
            try? DisposalRecord.of(instance, of: resolver, slot: nil, onDispose: nil, layers: layers)?.dispose()
            throw failure(.disposableTransient, resolver.serviceKey)
        }
    }

    /// The error a factory threw, as a ``ResolutionError`` (a dependency's own failure passes through).
    @usableFromInline
    func factoryFailure(_ error: any Error, of key: ServiceKey, context: ResolutionContext) -> ResolutionError {
        if let error = error as? ResolutionError { return error }
        return ResolutionError(.factoryFailed, requested: key, path: context.pathKeys, underlyingError: error)
    }

    /// The locked path: takes the container's lock once for the lookup and, for a reused service, the
    /// cache. Factories run with the lock released.
    @usableFromInline
    func resolveLocked<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) throws(ResolutionError) -> Service {
        // Observed (an observer, or dependency recording): every resolve comes here; the word is read only here.
        guard registry.observedWord.loadRelaxed() == 0 else {
            return try resolveObserved(Service.self, arguments, key: key) { () throws(ResolutionError) in
                try resolveLockedUnobserved(Service.self, arguments, key: key)
            }
        }
        return try resolveLockedUnobserved(Service.self, arguments, key: key)
    }

    private func resolveLockedUnobserved<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) throws(ResolutionError) -> Service {
        switch try lockAndFind(Service.self, arguments, key: key) {
        case .resolved(let value):
            return value
        case .registration(let resolver, let registeredIn, let localsIndex):
            return try resolveRegistered(resolver, arguments, registeredIn: registeredIn, localsIndex: localsIndex)
        }
    }

    /// Takes the lock and finds what resolves (`Service`, `Args`, `key`) here: a registration, returned with the
    /// lock held; or, with the lock released, a `provide`d value or an implicit wrapper. Throws, with the lock
    /// released, when this scope is disposed or nothing is found.
    func lockAndFind<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) throws(ResolutionError) -> Lookup<Service, Args> {
        let requested = ServiceKey(service: Service.self, arguments: Args.self, key: key)
        // Interned before the lock: its `==` is user code. None equal: no registration or `provide` used the key.
        let interned = registry.keys.intern(requested, adding: false)
        registry.lock.lock()
        if isDisposedValue {
            registry.lock.unlock()
            throw failure(.scopeDisposed, requested, scopeKey: self.key)
        }
        registry.publishTableIfNeeded()
        guard let interned else {
            registry.lock.unlock()
            return .resolved(try notFound(requested, arguments, entry: nil))
        }
        switch find(interned, Service.self, Args.self) {
        case .value(let value):
            registry.lock.unlock()
            return .resolved(value)
        case .registration(let resolver, let registeredIn, let localsIndex):
            return .registration(resolver, registeredIn: registeredIn, localsIndex: localsIndex)
        case .missing(let entry):
            registry.lock.unlock()
            return .resolved(try notFound(requested, arguments, entry: entry))
        }
    }

    /// What the locked path finds for `requested`: a `provide`d value or a scope's registration, searching
    /// from this scope up, or else the container's registration. Call with the lock held; returns with it held.
    func find<Service, Args>(_ requested: ServiceKey, _ type: Service.Type, _ arguments: Args.Type) -> Found<Service, Args> {
        let entry = registry.entries[requested]
        if let entry, entry.hasScopeLocals {
            var scope: Scope? = self
            while let current = scope {
                switch current.locals[requested] {
                case .value(let value)?:
                    // `provide` stored it under `Service`'s key.
                    let value = value as! Service
                    // An ancestor's value: published here too, so that the next resolve from this scope
                    // finds it lock-free, whatever the depth.
                    if current !== self { publishBelowOwner(CachedInstance.object(for: value), index: entry.localsIndex) }
                    return .value(value)
                case .registration(let registration)?:
                    // Stored under its own key, which holds the identities of `Service` and `Args`.
                    return .registration(
                        unsafeDowncast(registration, to: ServiceResolver<Service, Args>.self), registeredIn: current,
                        localsIndex: entry.localsIndex)
                case nil:
                    scope = current.parent
                }
            }
        }
        guard let registration = entry?.registration else { return .missing(entry) }
        // The registry key holds the identities of `Service` and `Args`, so this is the registration's type.
        return .registration(
            unsafeDowncast(registration, to: ServiceResolver<Service, Args>.self), registeredIn: nil, localsIndex: 0)
    }

    /// An implicit wrapper for `requested`, or the `notRegistered` error. Call without the lock.
    func notFound<Service, Args>(
        _ requested: ServiceKey, _ arguments: Args, entry: Registry.Entry?
    ) throws(ResolutionError) -> Service {
        if let implicit = try implicitInstance(Service.self, arguments, key: requested.key) { return implicit }
        var error = failure(.notRegistered, requested)
        // Only `provide` or a scope's `register` made the entry: it exists in a scope this one does not see.
        error.isProvidedElsewhere = entry?.hasScopeLocals ?? false
        error.isRegisteredElsewhere = entry?.hasScopeRegistrations ?? false
        error.resolvedFromRoot = parent == nil
        throw error
    }

    /// A wrapper that resolves without being registered (``Lazy``, ``Provider``, ``WeakReference``, an
    /// array of every registration), or nil. Call without the lock.
    func implicitInstance<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?
    ) throws(ResolutionError) -> Service? {
        guard ObjectIdentifier(Args.self) == ObjectIdentifier(Void.self),
              let wrapper = Service.self as? any ImplicitService.Type
        else { return nil }
        return try wrapper.implicitInstance(from: self, key: key) as? Service
    }

    /// The locked path for a reused registration the lock-free path found without an instance: it goes
    /// straight to the cache, unless the registrations changed since (then it looks up again).
    @usableFromInline
    func resolveUncreated<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ arguments: Args, generation: Int
    ) throws(ResolutionError) -> Service {
        registry.lock.lock()
        guard !isDisposedValue, registry.generation == generation else {
            registry.lock.unlock()
            return try resolveLocked(Service.self, arguments, key: resolver.serviceKey.key)
        }
        return try resolveRegistered(resolver, arguments)
    }

    /// Makes a transient, or finds the slot of a reused instance and resolves it. Call with the lock held;
    /// returns with it released.
    ///
    /// A registration made in a scope (`registeredIn`) caches with that scope in the root's place, and its
    /// instance is published at `localsIndex` in the resolving scope's table, where the `.provided` route reads.
    func resolveRegistered<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ arguments: Args, registeredIn: Scope? = nil, localsIndex: Int = 0
    ) throws(ResolutionError) -> Service {
        // (The async path checks the async factories it runs too; this one reads no task-local value.)
        if resolver.reuse.kind == .inScope || resolver.reuse.kind == .scopedTo,
           let captor = ResolutionContext.currentCaptor() {
            registry.lock.unlock()
            throw captiveDependency(resolver, captor: captor)
        }
        switch resolver.reuse.kind {
        case .transient:
            guard !resolver.requiresAwaitHere else {
                registry.lock.unlock()
                throw requiresAwait(resolver)
            }
            let onResolved = resolver.onResolved
            let decorators = resolver.decoratorsIfAny
            registry.lock.unlock()
            var layers: [InstanceDisposal]?
            let instance = try make(
                resolver, arguments, in: self, decorators: decorators, onResolved: onResolved, context: .current,
                layers: &layers)
            guard resolver.isDisposableTransient(instance) else { return instance }
            return try admitDisposableTransient(instance, of: resolver, layers: layers)
        case .graph:
            guard !resolver.requiresAwaitHere else {
                registry.lock.unlock()
                throw requiresAwait(resolver)
            }
            return try resolveGraph(resolver, arguments)
        case .inScope where keepsInTable(resolver, registeredIn: registeredIn):
            // This scope is the owner `cacheOwner` would find: no call, and no retain and release of it.
            return try resolveInTable(resolver, arguments, owner: self)
        case .singleton, .weak, .inScope, .scopedTo:
            let owner = try cacheOwner(of: resolver, registeredIn: registeredIn)
            if owner.keepsInTable(resolver, registeredIn: registeredIn) {
                return try resolveInTable(resolver, arguments, owner: owner)
            }
            let place = try cachePlace(
                of: resolver, arguments, owner: owner, registeredIn: registeredIn, localsIndex: localsIndex)
            return try resolve(
                place.slot, of: resolver, arguments, owner: place.owner, publishes: place.publishes, memoIn: place.memo,
                memoIndex: place.memoIndex)
        }
    }

    /// Whether this scope, as the owner of `resolver`'s instance, keeps it in its table as it is (see
    /// ``resolveInTable(_:_:owner:)``): a child scope, the registration not made in a scope, and one that needs
    /// none of a slot's states (``ServiceRegistration/isKeptInTable``). Call with the lock held.
    func keepsInTable<Service, Args>(_ resolver: ServiceResolver<Service, Args>, registeredIn: Scope?) -> Bool {
        registeredIn == nil && parent != nil && resolver.isKeptInTable
    }

    /// The scope whose cache keeps a reused registration's instances: the one its reuse picks, with the
    /// registering scope of a scope's registration in the root's place. Call with the lock held; returns with
    /// it held, or throws with it released.
    func cacheOwner<Service, Args>(
        of resolver: ServiceResolver<Service, Args>, registeredIn: Scope?
    ) throws(ResolutionError) -> Scope {
        switch resolver.reuse.kind {
        case .singleton, .weak:
            return registeredIn ?? root
        case .scopedTo:
            // Comparing scope keys may run user code, so not under the lock (keys and parents never change).
            registry.lock.unlock()
            guard let found = resolver.reuse.nearestScope(from: self, upTo: registeredIn) else {
                throw noMatchingScope(for: resolver, upTo: registeredIn)
            }
            registry.lock.lock()
            return found
        case .inScope, .transient, .graph:
            return self
        }
    }

    /// Where a reused registration's instance for `arguments` is cached in `owner` (see
    /// ``cacheOwner(of:registeredIn:)``): the slot there, and where the instance is published. Call with the
    /// lock held; returns with it held, or throws with it released.
    func cachePlace<Service, Args>(
        of resolver: ServiceResolver<Service, Args>, _ arguments: Args, owner: Scope, registeredIn: Scope?,
        localsIndex: Int
    ) throws(ResolutionError) -> CachePlace {
        let slot: Slot
        let publishes: Bool
        switch resolver.matching {
        case .ignored:
            slot = owner.singleSlot(for: resolver)
            // Only the slot of arguments-ignoring registrations is what the lock-free path reads.
            publishes = true
        case .hashed(let hashKey):
            let cache = owner.instanceCache(for: resolver)
            let argumentsKey = hashKey(arguments)
            if let existing = cache.hashed[argumentsKey] {
                slot = existing
            } else {
                slot = Slot()
                cache.hashed[argumentsKey] = slot
            }
            publishes = false
        case .compared(let isEqual):
            slot = try comparedSlot(in: owner.instanceCache(for: resolver), of: resolver, for: arguments, isEqual: isEqual)
            publishes = false
        }
        guard registeredIn == nil else {
            // A scope's registration: every resolving scope publishes the instance at the locals index, the
            // one place the `.provided` route reads (not a weak one's box, which is not a cached instance).
            let memo = publishes && resolver.reuse.kind != .weak ? self : nil
            return CachePlace(owner: owner, slot: slot, publishes: false, memo: memo, memoIndex: localsIndex)
        }
        // A scope below the owner of a `.scopedTo` instance publishes it too, so that its next resolve
        // finds it lock-free.
        let memo = publishes && owner !== self ? self : nil
        return CachePlace(owner: owner, slot: slot, publishes: publishes, memo: memo, memoIndex: resolver.index)
    }

    /// The `captiveDependency` error for `resolver`, resolved while `captor` is being made.
    func captiveDependency<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, captor: any Registration
    ) -> ResolutionError {
        var error = failure(.captiveDependency, resolver.serviceKey)
        error.reuse = resolver.reuse
        error.captor = captor.serviceKey
        error.captorReuse = captor.reuse
        return error
    }

    /// The error for a synchronous resolve of a registration whose factory is `async`. Resolved at the top
    /// (not from inside a synchronous factory), the `async` resolve that caught it goes on to await it.
    func requiresAwait<Service, Args>(_ resolver: ServiceResolver<Service, Args>) -> ResolutionError {
        var error = failure(.requiresAwait, resolver.serviceKey)
        error.isAwaitableHere = ResolutionContext.current.depth == 0
        error.isMainActor = resolver.isMainActor
        return error
    }

    /// The instance a slot caches (see ``CachedInstance``): a strong one always, a `.weak` one while someone holds it; throws when
    /// it is dead. Returned directly (no `Service?`): the callers run unspecialized, where an optional of a
    /// type parameter costs a metadata lookup on every call.
    func liveInstance<Service, Args>(
        in box: AnyObject, of resolver: ServiceResolver<Service, Args>
    ) throws(DeadInstance) -> Service {
        // A slot holds the instances of one registration, whose service type is `Service`.
        guard resolver.reuse.kind == .weak else { return resolver.instance(in: box) }
        return try Self.liveWeakInstance(in: unsafeDowncast(box, to: WeakBox.self))
    }

    @inline(never)
    private static func liveWeakInstance<Service>(in box: WeakBox) throws(DeadInstance) -> Service {
        // Unwrapped before the cast, as on the lock-free path (see `finish`).
        guard let object = box.object, let instance = object as? Service else { throw DeadInstance() }
        return instance
    }

    /// Returns the `.graph` instance this outermost resolution already made, or makes it and keeps it for
    /// the rest of the resolution (before its `resolved` callback runs, so that the callback can close a
    /// cycle through it). Call with the lock held; returns with it released.
    private func resolveGraph<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ arguments: Args
    ) throws(ResolutionError) -> Service {
        let context = ResolutionContext.current
        let onResolved = resolver.onResolved
        let decorators = resolver.decoratorsIfAny
        registry.lock.unlock()
        if let box = context.graphInstance(resolver.index) {
            // Kept by index, which names this registration, whose service type is `Service`.
            return resolver.instance(in: box)
        }
        // The callback shares the graph that the factory's resolves made.
        if onResolved != nil { context.holdGraph() }
        defer { if onResolved != nil { context.releaseGraph() } }
        // A `.graph` instance is never disposed, nor are its layers.
        var layers: [InstanceDisposal]?
        let instance = try make(
            resolver, arguments, in: self, decorators: decorators, onResolved: nil, context: context, layers: &layers)
        context.keepGraphInstance(resolver.cached(instance), index: resolver.index)
        if let onResolved {
            do {
                try context.enter(resolver)
                defer { context.leave() }
                try runCallback(onResolved, self, instance, of: resolver, context: context)
            } catch {
                context.dropGraphInstance(resolver.index)
                throw error
            }
        }
        // Resolved outermost: the graph ends with this call.
        if context.depth == 0 { context.endGraph() }
        return instance
    }

    /// The error for a `.scopedTo` registration resolved where no scope matches, naming the scopes searched.
    func noMatchingScope<Service, Args>(
        for resolver: ServiceResolver<Service, Args>, upTo last: Scope?
    ) -> ResolutionError {
        var error = failure(.noMatchingScope, resolver.serviceKey)
        error.reuse = resolver.reuse
        var searched: [AnyHashable?] = []
        var scope: Scope? = self
        while let current = scope {
            searched.append(current.key)
            scope = current === last ? nil : current.parent
        }
        error.searchedScopeKeys = searched
        return error
    }

    /// Resolves a registration whose instance `owner`, a child scope, keeps in its table as it is, with no
    /// ``Slot`` (see ``ServiceRegistration/isKeptInTable``): one allocation less per instance. While this thread
    /// makes it, this thread's context marks the entry. A thread that finds another's mark (or a path that
    /// needs a slot's states: a comparator set since, an async resolve) turns the entry into a slot first
    /// (see ``inflatedSlot(_:of:)``), and the marking thread settles that slot. Call with the lock held;
    /// returns with it released.
    private func resolveInTable<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>, _ arguments: Args, owner: Scope
    ) throws(ResolutionError) -> Service {
        let index = resolver.index
        guard !owner.isDisposedValue else {
            registry.lock.unlock()
            throw failure(.scopeDisposed, resolver.serviceKey, scopeKey: owner.key)
        }
        // A scope below the owner of a `.scopedTo` instance publishes it too, as `cachePlace` says.
        let memo = owner !== self ? self : nil
        guard let (cache, creation) = owner.tableEntry(for: index) else {
            let context = ResolutionContext.current
            owner.setCache(context, for: index)
            let onDispose = resolver.onDispose
            let decorators = resolver.decoratorsIfAny
            registry.lock.unlock()
            return try makeInTable(
                resolver, arguments, owner: owner, onDispose: onDispose, decorators: decorators, context: context)
        }
        guard creation == 0 else {
            // The entry of this registration's index holds its instance.
            let instance = cache._withUnsafeGuaranteedRef { resolver.instance(in: $0) }
            memo?.publishBelowOwner(cache.takeUnretainedValue(), index: index)
            registry.lock.unlock()
            return instance
        }
        return try resolve(
            owner.singleSlot(for: resolver), of: resolver, arguments, owner: owner, publishes: true, memoIn: memo,
            memoIndex: index)
    }

    /// Runs the factory of a registration that `owner` keeps in its table (see
    /// ``resolveInTable(_:_:owner:)``), then keeps and publishes the instance there, or in the slot a waiting
    /// thread made of the entry. Called with the lock released and the entry marked with `context`.
    private func makeInTable<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>,
        _ arguments: Args,
        owner: Scope,
        onDispose: DisposeHook<Service>?,
        decorators: [Decorator<Service>]?,
        context: ResolutionContext
    ) throws(ResolutionError) -> Service {
        let index = resolver.index
        let instance: Service
        var layers: [InstanceDisposal]?
        do {
            instance = try make(
                resolver, arguments, in: owner, decorators: decorators, onResolved: nil, context: context, layers: &layers)
        } catch {
            registry.lock.lock()
            let flight = owner.endMarkedCreation(index, context: context)
            registry.lock.unlock()
            flight?.finish(failing: error)
            throw error
        }
        let box = resolver.cached(instance)
        let record = DisposalRecord.of(instance, of: resolver, slot: nil, onDispose: onDispose, layers: layers)
        registry.lock.lock()
        guard !owner.isDisposedValue else {
            // The disposal took the table with the mark; a slot made of it is settled here.
            let flight = owner.endMarkedCreation(index, context: context)
            registry.lock.unlock()
            flight?.finish()
            try? record?.dispose()
            throw failure(.scopeDisposed, resolver.serviceKey, scopeKey: owner.key)
        }
        if let record { owner.disposals.append(record) }
        guard let slot = owner.takeInflatedSlot(index) else {
            owner.keep(box, isBox: resolver.cachesInBox, of: resolver, creation: registry.nextCreation(), for: index)
            if registry.tracksInstances { owner.track(box, of: resolver) }
            registry.lock.unlock()
            return instance
        }
        // Published only while the slot is the entry (an instance cache may have taken it as its first slot).
        let flight = owner.store(box, in: slot, of: resolver, publishes: owner.cache(for: index) === slot)
        registry.lock.unlock()
        flight?.finish()
        return instance
    }

    /// Ends this thread's creation at `index` that failed, or whose scope was disposed: clears its mark, or
    /// settles the slot a waiting thread made of it, whose flight the caller finishes once the lock is
    /// released. Call with the lock held.
    func endMarkedCreation(_ index: Int, context: ResolutionContext) -> InFlight? {
        if let slot = takeInflatedSlot(index) { return slot.settle(.empty) }
        if cache(for: index) === context { clearCache(for: index) }
        return nil
    }

    /// The slot another thread made of this thread's mark at `index` in this scope's table (see
    /// ``inflatedSlot(_:of:)``), taken out of ``Registry/inflatedCreations``, or nil. Call with the lock held.
    func takeInflatedSlot(_ index: Int) -> Slot? {
        guard !registry.inflatedCreations.isEmpty else { return nil }
        let scope = ObjectIdentifier(self)
        guard let position = registry.inflatedCreations.firstIndex(where: { $0.scope == scope && $0.index == index })
        else { return nil }
        return registry.inflatedCreations.remove(at: position).slot
    }

    /// The slot that takes over an entry of this child scope's table that holds no slot (see
    /// ``resolveInTable(_:_:owner:)``): for an instance kept as it is, a slot that holds it, with its
    /// registration and creation number; for a thread's mark, a slot being made by that thread, which it
    /// settles. Nil for the root scope and for an instance cache. Call with the lock held.
    func inflatedSlot<Service, Args>(_ existing: AnyObject, of resolver: ServiceResolver<Service, Args>) -> Slot? {
        guard parent != nil else { return nil }
        let index = resolver.index
        // Decided before a slot is made: an instance cache (every comparator resolve comes here) gets none.
        let slot: Slot
        if let maker = existing as? ResolutionContext {
            slot = Slot()
            slot.state = .creating(maker)
            registry.inflatedCreations.append((ObjectIdentifier(self), index, slot))
        } else if let creation = tableEntry(for: index)?.creation, creation != 0 {
            slot = Slot()
            slot.state = .created(existing)
            slot.registration = resolver
            slot.owner = ObjectIdentifier(self)
            slot.creation = creation
        } else {
            return nil
        }
        setCache(slot, for: index)
        return slot
    }

    /// Records `box`, a new instance of `resolver`, for ``survivors``. Call with the lock held, when the
    /// container tracks instances (`registry.tracksInstances`, tested by the caller: no call otherwise).
    func track<Service, Args>(_ box: AnyObject, of resolver: ServiceResolver<Service, Args>) {
        guard resolver.reuse.kind != .weak else { return }
        let value = resolver.instance(in: box)
        if Swift.type(of: value as Any) is AnyClass {
            tracked.append(TrackedInstance(service: resolver.serviceKey, instance: value as AnyObject))
        }
    }

    /// This scope's slot for an arguments-ignoring registration, made on first use. Call with the lock held.
    func singleSlot<Service, Args>(for resolver: ServiceResolver<Service, Args>) -> Slot {
        switch storedCache(for: resolver) {
        case let slot as Slot:
            return slot
        case nil:
            let slot = Slot()
            storeCache(slot, for: resolver)
            return slot
        case let .some(existing):
            if let slot = inflatedSlot(existing, of: resolver) { return slot }
            // A comparator is never taken away, so this is not expected; serve the slot the cache kept.
            let cache = unsafeDowncast(existing, to: InstanceCache<Args>.self)
            if let earlier = cache.earlier { return earlier }
            let slot = Slot()
            cache.earlier = slot
            return slot
        }
    }

    /// This scope's cache for a registration with a comparator, made on first use; a slot cached before
    /// the comparator was set is kept in it. Call with the lock held.
    func instanceCache<Service, Args>(for resolver: ServiceResolver<Service, Args>) -> InstanceCache<Args> {
        var existing = storedCache(for: resolver)
        if let found = existing, !(found is Slot), let slot = inflatedSlot(found, of: resolver) {
            existing = slot
        }
        if let existing, !(existing is Slot) {
            // Caches are named by the registration's index, so this one was made for these `Args`.
            return unsafeDowncast(existing, to: InstanceCache<Args>.self)
        }
        let cache = InstanceCache<Args>()
        cache.earlier = existing as? Slot
        storeCache(cache, for: resolver)
        return cache
    }

    /// This scope's cache for `resolver` (a ``Slot`` or an ``InstanceCache``): the root scope keeps it on
    /// the registration, a child scope in its table. Call with the lock held.
    func storedCache<Service, Args>(for resolver: ServiceResolver<Service, Args>) -> AnyObject? {
        parent == nil ? resolver.rootCache : cache(for: resolver.index)
    }

    func storeCache<Service, Args>(_ cache: AnyObject, for resolver: ServiceResolver<Service, Args>) {
        if parent == nil {
            resolver.rootCache = cache
        } else {
            setCache(cache, for: resolver.index)
        }
    }

    /// The slot for arguments equal to `arguments` under the user's comparator, which runs with the lock
    /// released. Call with the lock held; returns with it held, or throws with it released.
    ///
    /// A comparator that resolves its own registration would recurse without end (it runs before the
    /// registration's factory puts it on the path), so this thread's running comparators are recorded
    /// and re-entering one is a cycle.
    func comparedSlot<Service, Args>(
        in cache: InstanceCache<Args>, of resolver: ServiceResolver<Service, Args>, for arguments: Args,
        isEqual: (Args, Args) -> Bool
    ) throws(ResolutionError) -> Slot {
        let context = ResolutionContext.current
        var searched = 0
        while searched < cache.compared.count {
            let entries = cache.compared
            guard context.startComparing(resolver) else {
                registry.lock.unlock()
                throw context.pathError(.dependencyCycle, resolver)
            }
            registry.lock.unlock()
            let match = ResolutionContext.runningUserCode { entries[searched...].first { isEqual($0.arguments, arguments) } }
            context.endComparing()
            registry.lock.lock()
            if let match { return match.slot }
            searched = entries.count
        }
        let slot = Slot()
        cache.compared.append((arguments, slot))
        return slot
    }

    /// Returns the slot's instance, waits for the thread making it, or makes it: exactly once per slot.
    /// Call with the lock held; returns with it released.
    private func resolve<Service, Args>(
        _ slot: Slot,
        of resolver: ServiceResolver<Service, Args>,
        _ arguments: Args,
        owner: Scope,
        publishes: Bool,
        memoIn memo: Scope?,
        memoIndex: Int
    ) throws(ResolutionError) -> Service {
        var retiredWeakBox: AnyObject?
        // Every way out has released the lock; lock-free readers may still hold the retired box's address.
        defer { if let box = retiredWeakBox.take() { Reclamation.retire(box) } }
        while true {
            if owner.isDisposedValue {
                registry.lock.unlock()
                throw failure(.scopeDisposed, resolver.serviceKey, scopeKey: owner.key)
            }
            switch slot.state {
            case .created(let box):
                do throws(DeadInstance) {
                    let instance = try liveInstance(in: box, of: resolver)
                    memo?.publishBelowOwner(slot, box: box, index: memoIndex)
                    registry.lock.unlock()
                    return instance
                } catch {
                    // A `.weak` instance nobody holds any more: unpublish its box, release it once the
                    // readers are done with it, and make the next one.
                    if publishes { resolver.rootWord.publish(nil) }
                    retiredWeakBox = box
                    slot.state = .empty
                    continue
                }
            case .initializing(let box, let owner) where owner === ResolutionContext.current:
                // Its `resolved` callback is running on this thread and resolves it again: it is cached
                // (and held by the creation, so a weak one is alive).
                do throws(DeadInstance) {
                    let instance = try liveInstance(in: box, of: resolver)
                    registry.lock.unlock()
                    return instance
                } catch {
                    registry.lock.unlock()
                    throw failure(.dependencyCycle, resolver.serviceKey)
                }
            case .creatingAsync(let creation):
                // Its `resolved` callback, running on this thread, resolves it again: it is cached. Any other
                // synchronous resolve must not block a thread on an async creation: it must await it.
                if let box = creation.box, creation.callbackContext === ResolutionContext.current {
                    do throws(DeadInstance) {
                        let instance = try liveInstance(in: box, of: resolver)
                        registry.lock.unlock()
                        return instance
                    } catch {}
                }
                registry.lock.unlock()
                throw requiresAwait(resolver)
            case .creating, .initializing:
                // Another thread is making it (or this one, which the wait reports as a cycle).
                let flight = slot.flight(of: resolver)
                registry.lock.unlock()
                if let flight {
                    // An `await` resolve's attempt: its task suspends on the flight instead (`resolveAwaiting`).
                    if ResolutionContext.servesAwait { throw requiresAwait(resolver) }
                    try ResolutionContext.current.wait(
                        for: flight, requested: resolver.serviceKey, limit: registry.waitLimit)
                }
                registry.lock.lock()
            case .empty:
                guard !resolver.requiresAwaitHere else {
                    registry.lock.unlock()
                    throw requiresAwait(resolver)
                }
                let context = ResolutionContext.current
                slot.state = .creating(context)
                let onResolved = resolver.onResolved
                let onDispose = resolver.onDispose
                let decorators = resolver.decoratorsIfAny
                registry.lock.unlock()
                return try make(
                    resolver, arguments, in: owner, into: slot, decorators: decorators, onResolved: onResolved,
                    onDispose: onDispose, context: context, publishes: publishes)
            }
        }
    }

    /// Runs the factory of a reused service, caches the instance, then runs its `resolved` callback.
    /// Called with the lock released and the slot marked as being created by this thread; every way out
    /// settles the slot and finishes the flight of any thread waiting for it.
    private func make<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>,
        _ arguments: Args,
        in owner: Scope,
        into slot: Slot,
        decorators: [Decorator<Service>]?,
        onResolved: (@Sendable (Scope, Service) throws -> Void)?,
        onDispose: DisposeHook<Service>?,
        context: ResolutionContext,
        publishes: Bool
    ) throws(ResolutionError) -> Service {
        // The callback shares the graph that the factory's resolves made.
        if onResolved != nil { context.holdGraph() }
        defer { if onResolved != nil { context.releaseGraph() } }
        let instance: Service
        var layers: [InstanceDisposal]?
        do {
            instance = try make(
                resolver, arguments, in: owner, decorators: decorators, onResolved: nil, context: context, layers: &layers)
        } catch {
            registry.lock.withLock { slot.settle(.empty) }?.finish(failing: error)
            throw error
        }
        guard let (box, record) = cacheEntry(for: instance, layers: layers, of: resolver, slot: slot, onDispose: onDispose) else {
            let error = failure(.weakValueType, resolver.serviceKey)
            registry.lock.withLock { slot.settle(.empty) }?.finish(failing: error)
            throw error
        }
        registry.lock.lock()
        guard !owner.isDisposedValue else {
            let flight = slot.settle(.empty)
            registry.lock.unlock()
            flight?.finish()
            try? record?.dispose()
            throw failure(.scopeDisposed, resolver.serviceKey, scopeKey: owner.key)
        }
        if let record { owner.disposals.append(record) }
        guard let onResolved else {
            let flight = owner.store(box, in: slot, of: resolver, publishes: publishes)
            registry.lock.unlock()
            flight?.finish()
            return instance
        }
        slot.state = .initializing(box, context)
        registry.lock.unlock()
        // Cached first, so that whatever the callback resolves can get back to this instance.
        do {
            try context.enter(resolver)
            defer { context.leave() }
            try runCallback(onResolved, owner, instance, of: resolver, context: context)
        } catch {
            // The record is this thread's to dispose only if it is still among the scope's: a disposal of the
            // scope during the callback took it, and disposes the instance itself.
            let (flight, isOurs): (InFlight?, Bool) = registry.lock.withLock {
                (slot.settle(.empty), owner.takeDisposal(for: slot))
            }
            flight?.finish(failing: error)
            if isOurs { try? record?.dispose() }
            throw error
        }
        registry.lock.lock()
        // Disposed while the callback ran (by it, or by another thread): the disposal has taken the
        // record and disposes the instance, which must not be handed out.
        let isDisposed = owner.isDisposedValue
        let flight = isDisposed ? slot.settle(.empty) : owner.store(box, in: slot, of: resolver, publishes: publishes)
        registry.lock.unlock()
        flight?.finish()
        if isDisposed { throw failure(.scopeDisposed, resolver.serviceKey, scopeKey: owner.key) }
        return instance
    }

    /// What a slot caches for a new instance: its box (a ``WeakBox`` for a `.weak` registration) and its
    /// disposal record, of every layer (none for a weak one: the container does not keep it, so it does not
    /// dispose it); nil for a value made by a `.weak` registration, which cannot be referenced weakly.
    func cacheEntry<Service, Args>(
        for instance: Service, layers: [InstanceDisposal]?, of resolver: ServiceResolver<Service, Args>, slot: Slot,
        onDispose: DisposeHook<Service>?
    ) -> (box: AnyObject, record: DisposalRecord?)? {
        guard resolver.reuse.kind == .weak else {
            let record = DisposalRecord.of(instance, of: resolver, slot: slot, onDispose: onDispose, layers: layers)
            return (resolver.cached(instance), record)
        }
        guard Swift.type(of: instance as Any) is AnyClass else { return nil }
        return (WeakBox(instance as AnyObject), nil)
    }

    /// Caches a finished instance (see ``CachedInstance``) in `slot` of this scope and, when `publishes`, publishes it for
    /// the lock-free path. Call with the lock held.
    /// - Returns: The flight of the threads waiting for the instance, to finish once the lock is released.
    func store<Service, Args>(
        _ box: AnyObject, in slot: Slot, of resolver: ServiceResolver<Service, Args>, publishes: Bool
    ) -> InFlight? {
        let flight = slot.settle(.created(box))
        slot.registration = resolver
        slot.owner = ObjectIdentifier(self)
        slot.creation = registry.nextCreation()
        if registry.tracksInstances { track(box, of: resolver) }
        guard publishes else { return flight }
        if parent == nil {
            // (A `.weak` registration's `WeakBox` is no `InstanceBox`: published as it is, for `.weakRoot`.)
            resolver.rootWord.publish(instance: box)
        } else {
            publish(box, index: resolver.index)
        }
        return flight
    }

    /// Runs a registration's factory and its decorators (and, for a transient, its `resolved` callback) with
    /// the registration on this thread's resolution path. Called with the lock released. A decorated instance's
    /// layers that dispose themselves go to `layers` (an `inout` of a non-generic type: a generic result type
    /// would look up its metadata on every creation, the locked path being unspecialized).
    func make<Service, Args>(
        _ resolver: ServiceResolver<Service, Args>,
        _ arguments: Args,
        in scope: Scope,
        decorators: [Decorator<Service>]?,
        onResolved: (@Sendable (Scope, Service) throws -> Void)?,
        context: ResolutionContext,
        layers: inout [InstanceDisposal]?
    ) throws(ResolutionError) -> Service {
        try context.enter(resolver)
        defer { context.leave() }
        let start = registry.observedWord.loadRelaxed() != 0 ? Registry.now() : 0
        let instance: Service
        do {
            let made = try resolver.factory(scope, arguments)
            if let decorators {
                instance = try Self.decorate(made, of: resolver, with: decorators, in: scope, layers: &layers)
            } else {
                instance = made
            }
        } catch {
            throw factoryFailure(error, of: resolver.serviceKey, context: context)
        }
        if start != 0 { scope.reportCreation(resolver.serviceKey, since: start) }
        if let onResolved {
            do {
                try runCallback(onResolved, scope, instance, of: resolver, context: context)
            } catch {
                Self.discard(instance, layers: layers, of: resolver)
                throw error
            }
        }
        return instance
    }

    /// Disposes, as its registration's disposal rules say, an instance that no one will get, with every layer
    /// under it: a decorator or the transient's `resolved` callback failed after the factory made it, so
    /// nothing else would dispose it. A `.weak` or `.graph` instance is never the container's to dispose.
    static func discard<Service, Args>(
        _ instance: Service, layers: [InstanceDisposal]?, of resolver: ServiceResolver<Service, Args>
    ) {
        guard resolver.reuse.kind != .weak, resolver.reuse.kind != .graph else { return }
        try? DisposalRecord.of(
            instance, of: resolver, slot: nil, onDispose: resolver.onDispose, layers: layers)?.dispose()
    }

    /// Removes this scope's disposal record of `slot`'s instance: true when it was still here, false when a
    /// disposal of the scope took it (and disposes the instance itself). Call with the lock held.
    func takeDisposal(for slot: Slot) -> Bool {
        guard let index = disposals.lastIndex(where: { $0.slot === slot }) else { return false }
        disposals.remove(at: index)
        return true
    }

    /// `made`, an instance of `resolver`'s factory, wrapped by `decorators` in registration order (the first
    /// wraps `made`); the layers under the outermost that dispose themselves go to `layers`. When one throws,
    /// what the others made, which no one will get, is discarded (``discard(_:layers:of:)``): the last wrapper
    /// and every layer under it. Out of line: iterating an array of closures over a type parameter looks up metadata, which
    /// the unspecialized caller would otherwise do on every creation.
    @inline(never)
    static func decorate<Service, Args>(
        _ made: Service, of resolver: ServiceResolver<Service, Args>, with decorators: [Decorator<Service>],
        in scope: Scope, layers distinctLayers: inout [InstanceDisposal]?
    ) throws -> Service {
        var instance = made
        // Innermost first: the factory's instance, then each wrapper that another one wraps.
        var layers: [InstanceDisposal] = []
        do {
            for decorator in decorators {
                let wrapper = try decorator(scope, instance)
                layers.append(InstanceDisposal.of(instance))
                instance = wrapper
            }
        } catch {
            discard(instance, layers: InstanceDisposal.distinct(layers, under: instance), of: resolver)
            throw error
        }
        distinctLayers = InstanceDisposal.distinct(layers, under: instance)
        return instance
    }

    func runCallback<Service, Args>(
        _ callback: @Sendable (Scope, Service) throws -> Void,
        _ scope: Scope,
        _ instance: Service,
        of resolver: ServiceResolver<Service, Args>,
        context: ResolutionContext
    ) throws(ResolutionError) {
        do {
            try callback(scope, instance)
        } catch {
            throw factoryFailure(error, of: resolver.serviceKey, context: context)
        }
    }

    /// An error for `requested`, carrying this thread's resolution path when it happens inside a factory.
    func failure(_ code: ResolutionError.Code, _ requested: ServiceKey, scopeKey: AnyHashable? = nil) -> ResolutionError {
        // The async factories this task is running (if any), then this thread's synchronous ones.
        let outer = (AsyncNode.current?.pathKeys ?? []) + ResolutionContext.current.pathKeys
        return ResolutionError(code, requested: requested, path: outer.isEmpty ? [] : outer + [requested], scopeKey: scopeKey)
    }
}

extension DisposalRecord {
    /// The record for a new cached instance, or nil when it has neither an `onDispose` hook nor is
    /// `Disposable` or ``AsyncDisposable``, nor has `layers` (a decorated instance's, see
    /// ``Scope/decorate(_:of:with:in:layers:)``). Nil at once, with one word compared, for an undecorated instance
    /// of the type its registration last found to be neither (see
    /// ``ServiceRegistration/needsNoDisposalRecord(_:onDispose:)``): making the record only to find that
    /// copied the instance and destroyed an optional through metadata.
    @inline(__always)
    static func of<Service, Args>(
        _ instance: Service, of resolver: ServiceResolver<Service, Args>, slot: Slot?, onDispose: DisposeHook<Service>?,
        layers: [InstanceDisposal]? = nil
    ) -> DisposalRecord? {
        guard let layers, !layers.isEmpty else {
            return resolver.needsNoDisposalRecord(instance, onDispose: onDispose)
                ? nil : DisposalRecord(for: instance, of: resolver, slot: slot, onDispose: onDispose)
        }
        // The layers are disposed after the instance's own record, unless that replaces or skips disposal.
        let record = DisposalRecord(for: instance, of: resolver, slot: slot, onDispose: onDispose)
        guard resolver.disposesInstances, !(onDispose?.replacesDispose ?? false) else { return record }
        return DisposalRecord(key: resolver.serviceKey, slot: slot, disposing: record, then: layers)
    }

    private init?<Service, Args>(
        for instance: Service, of resolver: ServiceResolver<Service, Args>, slot: Slot?,
        onDispose: DisposeHook<Service>?
    ) {
        // The instance's own disposal, unless a hook replaces it or the container did not make it.
        var replaced = !resolver.disposesInstances
        switch onDispose {
        case .sync(_, let replaces)?, .async(_, let replaces)?: replaced = replaced || replaces
        case nil: break
        }
        // `let`s, not `var`s: the hooks capture them, and a captured `var` is a heap box per creation.
        let disposal = replaced ? .none : resolver.disposal(of: instance)
        let disposable: (any Disposable)?
        let asyncDisposable: (any AsyncDisposable)?
        switch disposal {
        case .none: (disposable, asyncDisposable) = (nil, nil)
        case .sync(let found): (disposable, asyncDisposable) = (found, nil)
        case .async(let found): (disposable, asyncDisposable) = (nil, found)
        }
        switch onDispose {
        case .sync(let hook, _)? where asyncDisposable == nil:
            self.init(key: resolver.serviceKey, slot: slot, dispose: {
                // The hook first, then the instance's own dispose(), which runs even when the hook throws.
                var failure: (any Error)?
                do { try hook(instance) } catch { failure = error }
                do { try disposable?.dispose() } catch { failure = failure ?? error }
                if let failure { throw failure }
            })
        case .sync(let hook, _)?:
            self.init(key: resolver.serviceKey, slot: slot, disposeAsync: {
                do {
                    try hook(instance)
                } catch {
                    try? await asyncDisposable?.dispose()
                    throw error
                }
                try await asyncDisposable?.dispose()
            })
        case .async(let hook, _)?:
            self.init(key: resolver.serviceKey, slot: slot, disposeAsync: {
                do {
                    try await hook(instance)
                } catch {
                    try? disposable?.dispose()
                    try? await asyncDisposable?.dispose()
                    throw error
                }
                try disposable?.dispose()
                try await asyncDisposable?.dispose()
            })
        case nil:
            if let disposable {
                self.init(key: resolver.serviceKey, slot: slot, dispose: { try disposable.dispose() })
            } else if let asyncDisposable {
                self.init(key: resolver.serviceKey, slot: slot, disposeAsync: { try await asyncDisposable.dispose() })
            } else {
                return nil
            }
        }
    }
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

/// What the locked path found for a resolve (see ``Scope/find(_:_:_:)``).
enum Found<Service, Args> {
    case value(Service)
    case registration(ServiceResolver<Service, Args>, registeredIn: Scope?, localsIndex: Int)
    case missing(Registry.Entry?)
}

/// What ``Scope/lockAndFind(_:_:key:)`` found.
enum Lookup<Service, Args> {
    /// A value to return (a `provide`d one, an implicit wrapper); the lock is released.
    case resolved(Service)
    /// A registration to resolve; the lock is held.
    case registration(ServiceResolver<Service, Args>, registeredIn: Scope?, localsIndex: Int)
}

/// Where a reused instance is cached and published (see ``Scope/cachePlace(of:_:owner:registeredIn:localsIndex:)``).
struct CachePlace {
    let owner: Scope
    let slot: Slot
    /// Whether the owner publishes the instance for the lock-free path (in its root word or table).
    let publishes: Bool
    /// The resolving scope, when it publishes the instance too, at `memoIndex`.
    let memo: Scope?
    let memoIndex: Int
}

/// A `.weak` instance that nobody holds any more (see ``Scope/liveInstance(in:of:)``).
struct DeadInstance: Error {}

/// A keyed bucket whose key the caller compares (see ``Scope/keyedCandidate(_:_:keyType:keyHash:)``):
/// valid until the read section it was found in ends.
@usableFromInline
struct KeyedCandidate {
    /// The bucket's unretained ``KeyBox``.
    @usableFromInline let typedKey: UnsafeMutableRawPointer
    /// What the lock-free path found in the bucket: the resolve's route when the key is equal.
    @usableFromInline let found: FastPath
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
    /// Nothing the lock-free path can serve.
    case locked
}
