/// Stimpak's container: the registrations, and the root of a tree of scopes that cache their instances.
///
/// ```swift
/// let container = Container()
/// container.register(Database.self, reuse: .singleton) { Database() }
/// container.register(Session.self, reuse: .inScope) { (scope: Scope) in Session(try scope.require(Database.self)) }
///
/// let request = container.openScope(requestID)
/// let session = try request.require(Session.self)
/// request.dispose()
/// ```
///
/// A container and its scopes are `Sendable`: register, resolve, open and dispose from any threads at once.
/// Releasing the last reference to a container disposes it and frees its registrations, factories and
/// everything they capture, even while a scope opened from it is still held (it is disposed); a `Provider` held
/// past it keeps only the registration it is bound to.
public final class Container: Resolving, Sendable {
    let registry: Registry
    /// The root scope: it holds the singletons and the `.inScope` instances resolved from the container.
    public let root: Scope

    /// Creates an empty container.
    ///
    /// ```swift
    /// let container = Container(defaultReuse: .singleton)   // DICE's `Defaults.scope`
    /// container.register(Api.self) { Api() }                // a singleton
    /// container.register(Request.self, reuse: .transient) { Request() }
    /// ```
    /// - Parameters:
    ///   - defaultReuse: The reuse of every registration that names none; `.transient` by default.
    ///   - waitLimit: How long a resolve waits for another thread or task that is creating the same reused
    ///     instance before it throws ``ResolutionError/Code/waitTimedOut``; a minute by default.
    public init(defaultReuse: Reuse = .transient, waitLimit: WaitLimit = .default) {
        registry = Registry(defaultReuse: defaultReuse, waitLimit: waitLimit)
        root = Scope(root: registry)
    }

    /// A container of `registry`.
    init(registry: Registry) {
        self.registry = registry
        root = Scope(root: registry)
    }

    /// The reuse of every registration that names none.
    public var defaultReuse: Reuse { registry.defaultReuse }

    /// How long a resolve waits for another thread's creation of the same instance.
    public var waitLimit: WaitLimit { registry.waitLimit }

    deinit {
        root.dispose()
        registry.removeAll()
    }

    /// The root scope, which the container resolves from.
    @inlinable
    public var resolutionScope: Scope { root }

    /// The open child scope of the root with `key`, if any.
    public subscript(key: AnyHashable) -> Scope? {
        root[key]
    }

    /// Whether the container has been disposed.
    public var isDisposed: Bool { root.isDisposed }

    /// Releases now the memory that disposals, unregistrations and replacements left for lock-free readers,
    /// in every container: for leak checks and tests.
    ///
    /// `dispose()` runs every disposal hook before it returns (the synchronous one leaves the first asynchronous
    /// hook, and those after it, to a task) and releases what the scopes held at once when
    /// no other thread is inside a resolve's lock-free section; otherwise the release (the last references to
    /// instances, and the scopes' tables) is left to the next disposal, registration change or `reclaim()`
    /// after those readers have moved on, so that no writer waits for a reader. This call waits for the
    /// readers inside a section now (a few instructions each; longer only for one the scheduler preempted),
    /// then releases everything left, except a registration whose factory is running.
    ///
    /// ```swift
    /// request.dispose()
    /// Container.reclaim()
    /// #expect(weakSession == nil)
    /// ```
    public static func reclaim() {
        DeferredDetach.detachAll()
        Reclamation.reclaimAll()
    }

    /// Disposes every scope and every cached instance, singletons included; the container resolves
    /// nothing afterwards.
    ///
    /// Unavailable in asynchronous code, where `await container.dispose()` awaits the asynchronous hooks: Swift
    /// picks this synchronous form for `await container.dispose()` at the top level of `main.swift`, and
    /// the attribute makes that pick a compile error instead of hooks silently left to run after the process
    /// may have exited.
    /// - Returns: The disposal hooks that threw.
    @available(
        *, noasync,
        message:
            "it leaves async hooks unawaited; in async code write 'await container.dispose()'; at the top level of main.swift (where Swift picks this form) call it from an async function: 'func shutDown() async { await container.dispose() }'"
    )
    @discardableResult
    public func dispose() -> [DisposalFailure] {
        root.dispose()
    }

    /// Disposes every scope and every cached instance, singletons included, awaiting the asynchronous
    /// hooks; the container resolves nothing afterwards.
    /// - Returns: The disposal hooks that threw.
    @discardableResult
    public func dispose() async -> [DisposalFailure] {
        await root.dispose()
    }
}
