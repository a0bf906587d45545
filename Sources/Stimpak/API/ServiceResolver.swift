/// One registration: how to make a `Service` from runtime arguments of type `Args`, and how to reuse it.
///
/// `register` returns it so that the registration can be refined in place:
///
/// ```swift
/// container.register(Person.self, { (_ first: String, _ last: String) in Person(first, last) }, reuse: .inScope)
///     .compareArgsBy { $0 == $1 }
/// ```
///
/// `Args` is `()` for a registration without arguments, the argument's type for one, and a tuple for several.
///
/// The name to use is this one, `ServiceResolver<Service, Args>`. It names the class
/// ``ServiceRegistration``, whose generic parameters come in the other order: the Swift runtime finds a
/// generic class's metadata by a hash that all but ignores the low bits of the first generic argument, so
/// with the service first, registrations of types declared near each other would collide there, each
/// registration's lookup costing about a thousand instructions more (see ARCHITECTURE.md, "Cold start: the
/// registration's generic order").
public typealias ServiceResolver<Service, Args> = ServiceRegistration<Args, Service>

/// Whether the scopes' tables may name a registration without holding it (``ScopeTable``).
enum TableNaming {
    /// No table has named it.
    case unnamed
    /// A table may name it: taken out of use, it is pinned in every open scope's table first.
    case named
    /// Unregistered or replaced: a table that keeps an instance of it holds it.
    case outOfUse
}

/// The class of a registration: use it as ``ServiceResolver``, `ServiceResolver<Service, Args>`.
///
/// `Service` comes last so that the runtime's metadata cache tells registrations apart by it.
public final class ServiceRegistration<Args, Service>: Registration, @unchecked Sendable {
    // `factory`, `serviceKey`, `reuse`, `index` and `rootWord` never change; the settings below them, and
    // `rootCache`, are guarded by the container's lock; `rootWord.pointee` is written under it and read
    // atomically by the lock-free path.

    /// How the instances are reused.
    public let reuse: Reuse
    /// The service type, the arguments type and the key this registration answers to.
    public let serviceKey: ServiceKey
    let index: Int
    /// How the scopes' tables name it (``ScopeTable``): guarded by the container's lock, and declared before every
    /// field whose size depends on `Args` or `Service`, so that unspecialized code reads it at a fixed offset.
    @exclusivity(unchecked) private var tableNaming = TableNaming.unnamed
    @usableFromInline let factory: (Scope, Args) throws -> Service
    /// The factory of a registration made with an `async` one, which only an `async` resolve runs (then
    /// `factory` is never called); nil for a synchronous registration.
    let asyncFactory: ((Scope, Args) async throws -> Service)?
    @usableFromInline let hasAsyncFactory: Bool
    /// Made with a main-actor factory: `factory` runs it on the main thread, `asyncFactory` hops there.
    @usableFromInline let isMainActor: Bool
    /// Whether the cache disposes a `Disposable` instance: false for an instance registered as it is,
    /// which the container did not make (an `onDispose` callback still runs).
    let disposesInstances: Bool
    /// Weak: the registry holds its registrations, and a released container must free both.
    private weak var registry: Registry?
    /// The root cache's published instance (unretained, see ``CachedInstance``), or 0.
    let rootWord: AtomicWord
    /// Holds `rootWord` and the four words after it.
    private let wordBlock: WordBlock

    @exclusivity(unchecked) var matching: ArgumentMatching<Args> = .ignored {
        didSet {
            if case .ignored = matching { ignoresArguments = true } else { ignoresArguments = false }
        }
    }
    @exclusivity(unchecked) var onResolved: (@Sendable (Scope, Service) throws -> Void)? {
        didSet { hasResolvedCallback = onResolved != nil }
    }
    @exclusivity(unchecked) var onDispose: DisposeHook<Service>?
    @exclusivity(unchecked) var allowsCaptiveDependencies = false
    /// The decorators that apply to it, in registration order; nil when there are none. Optional because
    /// unspecialized code (the locked path, a registration made in generic code) tests an optional array
    /// without metadata, but asks the runtime for the array's type to make an empty one or to count it.
    @exclusivity(unchecked) var decoratorsIfAny: [Decorator<Service>]?
    /// What ``route(_:)`` reads, kept beside the generic settings above: reading those in unspecialized code looks
    /// their generic metadata up (thousands of instructions per registration when a table is built).
    @exclusivity(unchecked) var ignoresArguments = true
    @exclusivity(unchecked) var hasResolvedCallback = false
    /// What happens to a `Disposable` instance of a transient: refused unless tracked or allowed.
    @exclusivity(unchecked) var disposableTransients: DisposableTransients = .refused
    /// The instances cached in the root scope (the singleton, or `.inScope` resolved from the container):
    /// a ``Slot``, or an ``InstanceCache`` once the registration has a comparator.
    @exclusivity(unchecked) var rootCache: AnyObject?
    /// Whether `rootCache` was taken (``takeRootCache(_:)``: the root's disposal, or the registration's
    /// retirement): a creation that was under way then publishes its instance in no root word, since no cache
    /// keeps it there for the readers that would load it.
    @exclusivity(unchecked) var isRootCacheTaken = false

    /// The metadata of `InstanceBox<Service>` once looked up (see ``boxType``), or 0.
    let boxTypeWord: AtomicWord
    /// The dynamic type of the last instance checked for `Disposable` conformance, its low bit set when it is
    /// `Disposable`, its second bit when it is `AsyncDisposable`; 0 before the first check. Read and written
    /// atomically: a stale value only costs a cast.
    let disposableCheck: AtomicWord
    /// Whether `Service` is a class type (not a protocol's existential, not a value type): an instance's
    /// dynamic type is then read from the object itself (see ``dynamicType(of:)``), and a cache keeps the
    /// instance itself (see ``cached(_:)``).
    let isClassService: Bool
    /// 0, or a retained ``DisposalMaker`` for the first dynamic type found to be `Disposable` or `AsyncDisposable`,
    /// written once (a compare-exchange) and released by `deinit`.
    let disposalMakerWord: AtomicWord
    /// 1 once a transient registration's first instance was found not `Disposable`; 0 before (and forever
    /// if it was). Read and written atomically: a stale 0 only costs a check.
    @usableFromInline let transientCheck: AtomicWord

    /// The registration's words are taken from `registry`, whose lock `locked` is.
    init(
        keyBox: AnyKeyBox?,
        reuse: Reuse,
        index: Int,
        registry: Registry,
        disposesInstances: Bool = true,
        dependencies: [Dependency]? = nil,
        factory: @escaping (Scope, Args) throws -> Service,
        asyncFactory: ((Scope, Args) async throws -> Service)? = nil,
        isMainActor: Bool = false,
        _ locked: borrowing Locked
    ) {
        self.asyncFactory = asyncFactory
        self.hasAsyncFactory = asyncFactory != nil
        self.isMainActor = isMainActor
        self.disposesInstances = disposesInstances
        self.dependencyList = dependencies
        self.serviceKey = ServiceKey(service: Service.self, arguments: Args.self, box: keyBox)
        self.isClassService = CachedInstance.isItself(Service.self)
        self.reuse = reuse
        self.index = index
        self.registry = registry
        self.factory = factory
        (self.rootWord, self.wordBlock) = registry.takeWords(5, locked)
        self.disposableCheck = rootWord.advanced(by: 1)
        self.transientCheck = rootWord.advanced(by: 2)
        self.boxTypeWord = rootWord.advanced(by: 3)
        self.disposalMakerWord = rootWord.advanced(by: 4)
    }

    /// Whether a table that keeps an instance of it as it is (see ``ScopeTable/keep(_:isBox:of:pinned:creation:for:_:)``)
    /// holds it: only once it is out of use; while it is registered the registry holds it, and the table names it.
    @inline(__always)
    func isHeldByTables(_ locked: borrowing Locked) -> Bool {
        switch tableNaming {
        case .unnamed:
            tableNaming = .named
            return false
        case .named: return false
        case .outOfUse: return true
        }
    }

    func takeOutOfTables(_ locked: borrowing Locked) -> Bool {
        defer { tableNaming = .outOfUse }
        return tableNaming == .named
    }

    deinit {
        // Nobody else holds the registration, so nobody reads the word.
        if let maker = disposalMakerWord.loadPointer() { Unmanaged<DisposalMaker<Service>>.fromOpaque(maker).release() }
    }

    /// The registration's key, or nil.
    public var key: AnyHashable? { serviceKey.key }

    /// The services its factory resolves, when they are known without making an instance (an autowired
    /// registration's parameter types, an `Optional` one's wrapped type, or what `dependsOn(_:)` declared);
    /// nil when they are not known.
    public var dependencies: [ServiceKey]? {
        withSettingsLock { dependencyList?.map(\.key) }
    }

    /// What the factory resolves and how (see ``Dependency``). Guarded by the container's lock.
    @exclusivity(unchecked) var dependencyList: [Dependency]?

    /// Declares the services this registration's factory resolves, so that ``Container/validate()`` checks
    /// them and the dependency graph draws them without making an instance (an autowired registration knows
    /// its own).
    ///
    /// ```swift
    /// container.register(Session.self, reuse: .inScope) { scope in Session(try scope.require(Database.self)) }
    ///     .dependsOn(Database.self)
    /// ```
    /// An `Optional`, `Lazy`, `Provider`, `WeakReference` or array type declares what it wraps, as an
    /// autowired parameter of that type does. A property wrapper's type declares what the instance's wrappers
    /// resolve, which validation cannot see otherwise, so that it reports a wrapper of a service whose factory
    /// is `async` (a wrapper resolves synchronously: see ``Injected``):
    ///
    /// ```swift
    /// container.register(OrderScreen.self) { OrderScreen() }
    ///     .dependsOn(Injected<OrderRepository>.self, LazyInjected<PDFExporter>.self)
    /// ```
    /// - Parameter types: The resolved types, unkeyed and without runtime arguments.
    /// - Returns: This registration, for chaining.
    @discardableResult
    public func dependsOn<each Dependent>(_ types: repeat (each Dependent).Type) -> Self {
        var declared: [Dependency] = []
        for type in repeat each types { declared.append(Dependency.of(type)) }
        withSettingsLock { dependencyList = (dependencyList ?? []) + declared }
        return self
    }

    /// Declares keyed (or argument-taking) services this registration's factory resolves.
    ///
    /// ```swift
    /// container.register(Report.self) { scope in Report(try scope.require(Logger.self, key: "audit")) }
    ///     .dependsOn(ServiceKey(service: Logger.self, key: "audit"))
    /// ```
    /// A property wrapper's type with a key declares a keyed wrapper of the instance (`@Injected(key: "audit")`):
    /// `ServiceKey(service: Injected<Logger>.self, key: "audit")`.
    /// - Parameter keys: The resolved services' keys.
    /// - Returns: This registration, for chaining.
    @discardableResult
    public func dependsOn(_ keys: ServiceKey...) -> Self {
        let declared = keys.map(Dependency.of)
        withSettingsLock { dependencyList = (dependencyList ?? []) + declared }
        return self
    }

    /// Caches one instance per class of arguments that `comparator` finds equal, in every cache that
    /// holds this service.
    ///
    /// Without it, a reused instance is made with the first call's arguments and returned whatever the
    /// arguments of later calls. The comparator runs outside the container's lock.
    /// - Parameter comparator: Returns true when two argument values should share an instance.
    /// - Returns: This registration, for chaining.
    @discardableResult
    public func compareArgsBy(_ comparator: @escaping @Sendable (Args, Args) -> Bool) -> Self {
        change { matching = .compared(comparator) }
        return self
    }

    /// Caches one instance per distinct value of the (single, `Hashable`) argument, found in O(1). The
    /// argument's `hash(into:)` and `==` run under the container's lock: they must not resolve from it.
    /// - Returns: This registration, for chaining.
    @discardableResult
    public func compareArgsByValue() -> Self where Args: Hashable {
        change { matching = .hashed { AnyHashable($0) } }
        return self
    }

    /// Caches one instance per distinct value of the arguments, whose types are all `Hashable`, found in O(1).
    /// Their `hash(into:)` and `==` run under the container's lock: they must not resolve from it.
    ///
    /// ```swift
    /// container.register(Person.self, reuse: .inScope) { (first: String, last: String) in Person(first, last) }
    ///     .compareArgsByValue()
    /// ```
    /// - Returns: This registration, for chaining.
    @discardableResult
    public func compareArgsByValue<each Argument: Hashable>() -> Self where Args == (repeat each Argument) {
        let key: ((repeat each Argument)) -> AnyHashable = { arguments in
            AnyHashable(HashableArguments(repeat each arguments))
        }
        change { matching = .hashed(key) }
        return self
    }

    /// Runs `callback` after each instance is created, before it is handed out.
    ///
    /// Use it for property injection and to close a cycle of references: a reused instance is already
    /// cached when the callback runs, so resolving something that depends back on it gets this instance.
    /// When the callback meets a cycle through an instance this thread is still making (a `Parent` whose
    /// factory resolved this `Child`, whose callback wants the `Parent`), it runs again when the outermost
    /// synchronous resolve ends, once that instance exists (Swinject's `initCompleted`). Made by an `await`
    /// resolve, a reused instance whose callback needs an instance of an `async` factory runs it again once that
    /// instance exists: when the async factory that this task is running (the `Parent`'s) has made it, or after
    /// awaiting it. If it fails then, that resolve throws its error, and the instances stay made.
    /// - Parameter callback: Receives the scope the instance was made in and the new instance; may throw.
    /// - Returns: This registration, for chaining.
    @discardableResult
    public func resolved(_ callback: @escaping @Sendable (Scope, Service) throws -> Void) -> Self {
        change { onResolved = callback }
        return self
    }

    /// Has the resolving scope keep every `Disposable` instance of this transient registration and dispose
    /// it when the scope is disposed (DryIoc's `trackDisposableTransient`).
    ///
    /// Without it (or ``allowDisposableTransient()``), a transient whose instance is `Disposable` fails with
    /// ``ResolutionError/Code/disposableTransient``, since nobody would dispose it. The scope holds each
    /// instance until it is disposed: use it for scopes that end (requests, screens).
    /// - Returns: This registration, for chaining.
    @discardableResult
    public func trackDisposableTransients() -> Self {
        change { disposableTransients = .tracked }
        return self
    }

    /// Lets this transient registration make `Disposable` instances that nobody disposes: the caller
    /// disposes them (DryIoc's `allowDisposableTransient`).
    /// - Returns: This registration, for chaining.
    @discardableResult
    public func allowDisposableTransient() -> Self {
        withSettingsLock { disposableTransients = .allowed }
        return self
    }

    /// Whether a transient's `instance` is to be treated as `Disposable`: judged by the first instance the
    /// registration makes (its dynamic type), as DryIoc judges the implementation type at registration. A
    /// nil `Optional` or an `AnyHashable` that is not `Disposable` judges nothing (see ``castsLookInside(_:)``).
    ///
    /// Inlined into the transient's resolve, so that after a first instance that is not `Disposable` it
    /// costs a load and a comparison; only a `Disposable` first instance makes every later one checked.
    @inlinable @inline(__always)
    func isDisposableTransient(_ instance: Service) -> Bool {
        if transientCheck.loadRelaxed() == 1 { return false }
        return checkDisposableTransient(instance)
    }

    /// The check of ``isDisposableTransient(_:)`` that looks at the instance: remembers a first instance
    /// that is not `Disposable`.
    @usableFromInline
    func checkDisposableTransient(_ instance: Service) -> Bool {
        // A cast in place: computing the dynamic type through `Any` would box the value (an allocation),
        // which only a first instance that is not `Disposable` pays (every one, for a type that never settles).
        let isDisposable = instance is any Disposable || instance is any AsyncDisposable
        if !isDisposable, !castsLookInside(Swift.type(of: instance as Any)) { transientCheck.storeRelaxed(1) }
        return isDisposable
    }

    /// Lets this long-lived registration (a singleton, a weak one) depend on scoped services, which Stimpak
    /// otherwise refuses with ``ResolutionError/Code/captiveDependency``.
    ///
    /// The singleton then keeps the instance it got (the root scope's, for an `.inScope` service) for as long
    /// as it lives: use it only when that is what you mean.
    /// - Returns: This registration, for chaining.
    @discardableResult
    public func allowCaptiveDependencies() -> Self {
        withSettingsLock { allowsCaptiveDependencies = true }
        return self
    }

    /// Runs `callback` on each cached instance when the cache that holds it is disposed.
    ///
    /// For an instance that is also `Disposable` (or `AsyncDisposable`), the callback runs first and then the
    /// instance's own `dispose()` (even when the callback throws; each error is reported, a failure of its own), unless
    /// `replacingDispose` says the callback replaces it.
    /// - Parameters:
    ///   - replacingDispose: Whether the callback replaces the instance's own `dispose()`; false by default.
    ///   - callback: Receives the instance being released; may throw.
    /// - Returns: This registration, for chaining.
    @discardableResult
    public func onDispose(replacingDispose: Bool = false, _ callback: @escaping @Sendable (Service) throws -> Void) -> Self {
        withSettingsLock { onDispose = .sync(callback, replacesDispose: replacingDispose) }
        return self
    }

    /// Runs the asynchronous `callback` on each cached instance when the cache that holds it is disposed:
    /// awaited by `await scope.dispose()`, in order with the other hooks.
    ///
    /// ```swift
    /// container.register(Connection.self, reuse: .inScope) { try await Connection.open() }
    ///     .onDispose { connection in try await connection.close() }
    /// ```
    /// A synchronous `dispose()` cannot await it: it runs afterwards, in a task of its own. As with the
    /// synchronous hook, a `Disposable` or `AsyncDisposable` instance's own `dispose()` runs after it unless
    /// `replacingDispose` is true.
    /// - Parameters:
    ///   - replacingDispose: Whether the callback replaces the instance's own `dispose()`; false by default.
    ///   - callback: Receives the instance being released; may suspend and throw.
    /// - Returns: This registration, for chaining.
    @discardableResult
    public func onDispose(
        replacingDispose: Bool = false, _ callback: @escaping @Sendable (Service) async throws -> Void
    ) -> Self {
        withSettingsLock { onDispose = .async(callback, replacesDispose: replacingDispose) }
        return self
    }

    /// Changes a setting only the locked path reads, under the container's lock; once the container is gone,
    /// nothing resolves the registration any more.
    private func withSettingsLock<T>(_ body: () -> T) -> T {
        if let registry {
            registry.lock.withLock { _ in body() }
        } else {
            body()
        }
    }

    /// Changes a setting the lock-free path depends on (its route), under the container's lock, retiring
    /// the published table.
    private func change(_ body: () -> Void) {
        if let registry {
            registry.change { _ in body() }
        } else {
            body()
        }
    }

}
