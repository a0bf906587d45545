/// What every registration offers once its service and argument types are erased.
protocol Registration: AnyObject, Sendable {
    var serviceKey: ServiceKey { get }
    var reuse: Reuse { get }
    /// Names the registration's cache in every scope.
    var index: Int { get }
    /// The published instance of the root scope's cache (unretained, see ``CachedInstance``), or 0.
    var rootWord: AtomicWord { get }
    /// Whether it may depend on shorter-lived services (``ServiceRegistration/allowCaptiveDependencies()``).
    /// Guarded by the container's lock.
    var allowsCaptiveDependencies: Bool { get }
    /// How the lock-free path serves it, or nil when only the locked path can.
    func route(_ locked: borrowing Locked) -> LookupTable.Route?
    /// Adds a decorator that applies to it; retire the table too.
    func attach(_ decorator: AnyDecorator, _ locked: borrowing Locked)
    /// Resolves it from `root` with no runtime arguments, for `Container/makeEagerSingletons()`.
    func makeEagerly(from root: Scope) throws(ResolutionError)
    /// The same, awaiting an `async` (or main-actor) factory.
    func makeEagerly(from root: Scope) async throws(ResolutionError)
    /// Detaches the instances the root scope caches for it, for the caller to release outside the lock
    /// once readers are done.
    func takeRootCache(_ locked: borrowing Locked) -> AnyObject?
    /// Marks it out of use as the scopes' tables see it, and returns whether a table may name it without holding
    /// it (see ``Scope/takeOutOfTables(_:_:)``).
    func takeOutOfTables(_ locked: borrowing Locked) -> Bool
    /// The root scope's cache for it (a `Slot` or an `InstanceCache`), for the live report.
    func rootCacheObject(_ locked: borrowing Locked) -> AnyObject?
    /// What its factory resolves, when known.
    func declaredDependencies(_ locked: borrowing Locked) -> [Dependency]?
    /// Whether its factory is `async` (not a main-actor one).
    var isAsync: Bool { get }
    /// What is wrong with it alone, found without making anything (for validation).
    func registrationFindings(_ locked: borrowing Locked) -> [ResolutionError]
    /// Its factory and settings as they are now, to make the same registration in another container from
    /// (``RegistrationCopy``); `locked` is its own container's.
    func copy(_ locked: borrowing Locked) -> any RegistrationCopy
    /// Resolves its service from `scope` with no runtime arguments, awaiting an async factory: for validation,
    /// and for a `resolved` callback that waits for the instance (see ``AwaitingCallback``).
    func resolveAsync(from scope: Scope) async throws
}

/// A registration's factory and settings, read under its container's lock, from which validation's throwaway
/// copy makes the same registration under its own lock: the two containers' locks are never held together, and
/// the original's settings are never read without the original's lock.
protocol RegistrationCopy {
    /// Makes the registration, settings included, in `registry` under `index`; `locked` is `registry`'s.
    func register(in registry: Registry, index: Int, _ locked: borrowing Locked) -> any Registration
}

extension Registration {
    /// Whether, while it is being made, resolving a scoped service would capture it (the captive rule): it
    /// lives container-wide and has not opted out.
    func capturesScopedServices(_ locked: borrowing Locked) -> Bool {
        reuse.isContainerWide && !allowsCaptiveDependencies
    }
}

/// The container's registrations, the lock that guards them and every scope's state, and the lookup
/// table published for lock-free resolves.
///
/// Writers (register, unregister, settings, `provide`) change `entries` under the lock and replace the
/// published table: when one was published, its successor is built and published in the same locked step, so
/// lock-free readers never find the word empty after a change and never take the lock to rebuild it. When none
/// was (registrations before the first resolve), none is built: the first resolve builds it under the lock.
/// Lock-free readers use the table inside a read section, so a retired table is released only when no reader
/// can hold it (``Reclamation``).
@usableFromInline
final class Registry: @unchecked Sendable {
    // `entries` and `nextIndex` are guarded by `lock`; `tableWord` is written under `lock` and read
    // atomically in read sections.
    struct Entry {
        var registration: (any Registration)?
        /// Some scope has been given a value for this key with `provide`, or a registration with `register`,
        /// so scopes are searched first.
        var hasScopeLocals = false
        /// Some scope has a registration for this key (for the message when none is visible).
        var hasScopeRegistrations = false
        /// Names the published `provide`d values of this key in every scope's table (see
        /// ``Scope/provide(_:as:key:)``); assigned on the first `provide`.
        var localsIndex = 0
    }

    let lock = ContainerLock()
    /// How long a resolve waits for another thread's creation of the same instance.
    let waitLimit: WaitLimit
    /// The reuse of a registration that names none.
    let defaultReuse: Reuse
    /// Every key in `entries`, the scopes' `locals`, `declaredProvided`, `observedEdges` and the decorators is
    /// interned first (see ``KeyInterner``): under the lock, keys compare without running their `==`.
    var keys: KeyInterner { KeyInterner(owner: keyOwner ?? self) }
    /// The ``KeyInterner/domain`` of the keys interned here.
    let keyDomain: UInt
    /// The registry whose keys this one's are (validation's copy interns in the registry it copies); nil for itself.
    private let keyOwner: Registry?
    /// The interned keys' boxes by their hash (see ``KeyInterner``); each array only grows.
    @exclusivity(unchecked) var internedKeys: [Int: [AnyKeyBox]] = [:]
    @exclusivity(unchecked) var entries: [ServiceKey: Entry] = [:]
    /// The published ``LookupTable`` (owned by the word), or 0 when it has to be rebuilt.
    @usableFromInline let tableWord: AtomicWord
    /// Each registration's index names its cache in every scope; never reused, so a cache can't outlive
    /// its registration and be mistaken for another's.
    @exclusivity(unchecked) private var nextIndex = 0
    /// Registrations taken out of `entries` (unregistered, replaced, or the container released), to retire
    /// (see ``Reclamation``) once the lock is released.
    @exclusivity(unchecked) private var retiredRegistrations: [any Registration] = []
    /// The root scope's caches of the retired registrations, retired with them.
    @exclusivity(unchecked) private var retiredCaches: [AnyObject] = []
    /// The block that registrations' published words are taken from (see ``takeWords(_:_:)``).
    @exclusivity(unchecked) private var wordBlock: WordBlock?
    /// Counts the instances stored in caches, to number them for the live report.
    @exclusivity(unchecked) private var creations = 0
    /// Whether caches keep weak references to their instances (``Container/tracksInstances``).
    @exclusivity(unchecked) var tracksInstances = false
    /// The observer of resolutions, creations and disposals, if any (``Container/observer``).
    var observer: (any ResolutionObserver)?
    /// Whether resolutions record the dependencies they observe (``Container/recordsDependencies``).
    var recordsDependencies = false
    /// The dependencies observed while recording: who resolved what.
    var observedEdges: Set<DependencyGraph.Edge> = []
    /// Nonzero while something observes or records: then the published table serves nothing, every resolve
    /// takes the locked path, and the resolve path reads this word only there.
    let observedWord: AtomicWord

    /// The values that scopes provide, as declared with ``Container/registerProvided(_:key:)``.
    var declaredProvided: Set<ServiceKey> = []
    /// The keys of registrations refused because the container was disposed, for validation to report.
    var rejectedRegistrations: [ServiceKey] = []
    /// The slots threads made of the entries that another thread's mark held in a scope's table (see
    /// ``Scope/resolveInTable(_:_:owner:_:)``), by scope and registration index: the marking thread settles each.
    /// Empty unless a creation is waited for.
    @exclusivity(unchecked) var inflatedCreations: [(scope: ObjectIdentifier, index: Int, slot: Slot)] = []
    /// Every decorator, in registration order: each new registration gets those that apply to it.
    @exclusivity(unchecked) var decorators: [AnyDecorator] = []
    /// Counts the retired tables. A registration found in a table built at the current generation is
    /// still the one registered, and its key has no scope-local values.
    @exclusivity(unchecked) private(set) var generation = 0

    /// - Parameter keysOf: The registry whose keys this one's are: validation's copy passes the original.
    init(defaultReuse: Reuse, waitLimit: WaitLimit, keysOf keyOwner: Registry? = nil) {
        self.defaultReuse = defaultReuse
        self.waitLimit = waitLimit
        self.keyOwner = keyOwner
        keyDomain = keyOwner?.keyDomain ?? KeyInterner.nextDomain()
        tableWord = .allocate(count: 2)
        observedWord = tableWord.advanced(by: 1)
        observedWord.storeRelaxed(0)
    }

    deinit {
        // Nothing can be reading: every scope, and so every resolve, holds the registry.
        _ = tableWord.retireOwned(LookupTable.self)
        tableWord.deallocate()
    }

    /// The next creation number.
    func nextCreation(_ locked: borrowing Locked) -> Int {
        creations += 1
        return creations
    }

    /// `count` words for a registration, all 0, and the block it keeps alive for them. Blocks grow from 16
    /// words to 256, so that a small container takes little, and a large one a block per 64 registrations.
    func takeWords(_ count: Int, _ locked: borrowing Locked) -> (words: AtomicWord, block: WordBlock) {
        if let block = wordBlock, let words = block.take(count) { return (words, block) }
        let block = WordBlock(capacity: wordBlock.map { Swift.min($0.capacity * 2, 1024) } ?? 16, taking: count)
        wordBlock = block
        return (block.first, block)
    }

    /// A new registration's index, or a key's locals index: never reused.
    func makeIndex(_ locked: borrowing Locked) -> Int {
        defer { nextIndex += 1 }
        return nextIndex
    }

    /// Runs `body` with the lock held, then replaces the published table (``replaceTable(_:)``), since the
    /// registrations changed.
    func change<T, E: Error>(_ body: (borrowing Locked) throws(E) -> T) throws(E) -> T {
        let locked = lock.acquire()
        let result: T
        do {
            result = try body(locked)
        } catch {
            lock.release(locked)
            throw error
        }
        let retired = replaceTable(locked)
        let registrations = takeRetired(locked)
        lock.release(locked)
        reclaim(retired, registrations)
        return result
    }

    /// Takes `registration` out of use: it is released once no reader can reach it and no factory of it
    /// runs. Call after taking it out of `entries`, and retire the table too.
    func retire(_ registration: any Registration, _ locked: borrowing Locked) {
        retiredRegistrations.append(registration)
        // Its root scope's instance goes now, not with the registration, which a bound provider may hold for as
        // long as it lives (see ``ProviderBinding``).
        if let cache = registration.takeRootCache(locked) { retiredCaches.append(cache) }
    }

    /// The retired registrations and their root scope's caches, to reclaim; nil when none is.
    private func takeRetired(_ locked: borrowing Locked) -> Retired? {
        // A registration that replaces nothing (most of them) retires nothing: no array is touched.
        if retiredRegistrations.isEmpty { return nil }
        defer { (retiredRegistrations, retiredCaches) = ([], []) }
        return Retired(registrations: retiredRegistrations, caches: retiredCaches)
    }

    /// Registrations taken out of use, and their root scope's caches.
    private struct Retired {
        let registrations: [any Registration]
        let caches: [AnyObject]
    }

    /// Hands a retired table, registrations and their root scope's caches to ``Reclamation``: released once no
    /// reader can be using them and no factory of theirs runs. Call without the lock: the deinits of what the
    /// registrations held (factories, captured objects, the root scope's instances) may resolve.
    private func reclaim(_ table: consuming LookupTable?, _ retired: consuming Retired?) {
        guard let retired else {
            // Registrations in a row, with no table published and nothing replaced, retire nothing: no scan.
            if table != nil { Reclamation.retire(table) }
            return
        }
        if retired.caches.isEmpty {
            Reclamation.retire(table, registrations: retired.registrations)
        } else {
            Reclamation.retire((table, retired.caches), registrations: retired.registrations)
        }
    }

    /// Drops every registration, once the container is released: a scope that outlives it (already
    /// disposed) keeps the registry, but not the factories and what they capture. Call after the root's
    /// disposal: no open scope's table names a registration then (see ``Scope/takeOutOfTables(_:_:)``).
    func removeAll() {
        let locked = lock.acquire()
        retiredRegistrations.reserveCapacity(retiredRegistrations.count + entries.count)
        for entry in entries.values {
            if let registration = entry.registration { retire(registration, locked) }
        }
        entries = [:]
        // Taken with the registrations, so that a scope held after its container is released keeps none of
        // what the decorators and the observer captured; released once the lock is (their deinits may run
        // user code).
        var decorators: [AnyDecorator] = []
        var observer: (any ResolutionObserver)?
        swap(&decorators, &self.decorators)
        swap(&observer, &self.observer)
        observedEdges = []
        recordsDependencies = false
        observedWord.store(0)
        let retired = retireTable(locked)
        let registrations = takeRetired(locked)
        lock.release(locked)
        withExtendedLifetime((decorators, observer)) {}
        reclaim(retired, registrations)
    }

    /// Unpublishes the table; call ``release(retiredTable:)`` after unlocking.
    func retireTable(_ locked: borrowing Locked) -> LookupTable? {
        generation += 1
        return tableWord.retireOwned(LookupTable.self)
    }

    /// Unpublishes the table and, when one was published and some thread is inside a read section now (lock-free
    /// resolves are under way), publishes its successor built from `entries` in its place, with one exchange:
    /// those readers find the old table or the new one, never none, which would send them to the locked path to
    /// wait for this lock. Returns the unpublished one, to release after unlocking (``release(retiredTable:)``).
    /// Call once `entries` holds the change. With no reader about (registrations in a row, a test's setup), no
    /// table is built per change: the next resolve builds one.
    func replaceTable(_ locked: borrowing Locked) -> LookupTable? {
        guard tableWord.loadRelaxed() != 0, Reclamation.isAnyReaderInside() else { return retireTable(locked) }
        generation += 1
        return tableWord.replaceOwned(with: makeTable(locked))
    }

    /// Releases a table that ``retireTable(_:)`` returned, once no reader can be using it. Call without the lock.
    static func release(retiredTable table: consuming LookupTable?) {
        guard let table else { return }
        Reclamation.retire(table)
    }

    /// Marks `key` as having values or registrations in scopes, so that the locked path searches the scopes
    /// first and the lock-free path reads the scopes' tables at the returned index (its locals index). The
    /// first time, the published table is replaced: release the old one after unlocking. `replacingRegistration`
    /// (a scope's own registration replaced): replaced every time, a new generation, so that an `await` resolve
    /// handed the replaced registration's slot does not make its instance (see `Scope.resolveAwaiting`).
    func markScopeLocal(
        _ key: ServiceKey, isRegistration: Bool = false, replacingRegistration: Bool = false, _ locked: borrowing Locked
    ) -> (index: Int, retired: LookupTable?) {
        var entry = entries[key] ?? Entry()
        var isNew = false
        // Marked already (every request's `provide` after the first): nothing to write back.
        if !entry.hasScopeLocals || isRegistration && !entry.hasScopeRegistrations {
            if isRegistration { entry.hasScopeRegistrations = true }
            if !entry.hasScopeLocals {
                entry.hasScopeLocals = true
                entry.localsIndex = makeIndex(locked)
                isNew = true
            }
            entries[key] = entry
        }
        // Replaced once `entries` holds the change: a successor table is built from it.
        return (entry.localsIndex, isNew || replacingRegistration ? replaceTable(locked) : nil)
    }

    /// Builds and publishes the table if none is.
    func publishTableIfNeeded(_ locked: borrowing Locked) {
        guard tableWord.loadRelaxed() == 0 else { return }
        tableWord.publishOwned(makeTable(locked))
    }

    /// The lookup table of `entries` as they are, empty while an observer is set (every resolve then takes the
    /// locked path, which reports it).
    private func makeTable(_ locked: borrowing Locked) -> LookupTable {
        LookupTable(observedWord.loadRelaxed() != 0 ? [:] : entries, generation: generation, locked)
    }

    /// What is registered for the same service type under other keys or argument types.
    func alternatives(to key: ServiceKey, _ locked: borrowing Locked) -> [ServiceKey] {
        entries.compactMap { entry in
            guard let registration = entry.value.registration,
                ObjectIdentifier(registration.serviceKey.service) == ObjectIdentifier(key.service)
            else { return nil }
            return registration.serviceKey
        }
        .sorted { $0.description < $1.description }
    }
}
