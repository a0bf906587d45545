/// The current scope: where property wrappers and ``inject(_:key:fileID:line:)`` resolve from.
///
/// The scope of the innermost factory running on this thread (or, for an `async` factory, in this task and
/// the child tasks it starts), so that what a factory makes resolves from the scope it runs for; else the
/// scope bound with ``Scope/withCurrent(_:)`` around the running code, a task-local value that follows the
/// code through `async` calls and into child tasks (not into `Task.detached` or work handed to a dispatch
/// queue), which synchronous code reads too; else the root scope of ``Container/default``.
extension Scope {
    /// The scope bound by the innermost ``withCurrent(_:)`` around the running code, if any.
    @TaskLocal static var bound: Scope?

    /// The scope injections resolve from here: the scope of the innermost factory running here, or else the
    /// one bound with ``withCurrent(_:)`` around the running code, or else the root scope of
    /// ``Container/default``.
    ///
    /// ```swift
    /// let handler = try Scope.current.require(Handler.self)
    /// ```
    /// - Throws: ``ResolutionError/Code/noCurrentScope`` when nothing is bound and no default is set.
    public static var current: Scope {
        get throws(ResolutionError) { try current(resolving: ServiceKey(service: Scope.self)) }
    }

    /// The scope of the innermost factory running here (on this thread, or this task's async factory), or
    /// else the scope bound around the running code, or else the default container's root; nil when none.
    static var currentIfAny: Scope? {
        ResolutionContext.factoryScope ?? AsyncNode.current?.scope ?? bound ?? Container.default?.root
    }

    /// The current scope, or the error naming `requested`, the service that needed it, and the call site.
    static func current(resolving requested: ServiceKey, fileID: String = "", line: Int = 0) throws(ResolutionError) -> Scope {
        if let scope = currentIfAny { return scope }
        var error = ResolutionError(.noCurrentScope, requested: requested)
        error.fileID = fileID
        error.line = line
        throw error
    }

    /// Runs `body` with this scope as the current scope: every injection in it, and in the tasks it creates
    /// (but not detached ones), resolves from here, except in the objects a factory makes, which resolve from
    /// the scope that factory runs for.
    ///
    /// ```swift
    /// let request = container.openScope(requestID)
    /// defer { request.dispose() }
    /// request.provide(httpRequest)
    /// try request.withCurrent { try OrderHandler().handle() }   // its @Injected properties resolve from `request`
    /// ```
    /// - Parameter body: The code to run.
    /// - Returns: What `body` returns.
    public func withCurrent<Result>(_ body: () throws -> Result) rethrows -> Result {
        try Scope.$bound.withValue(self, operation: body)
    }

    /// Runs the asynchronous `body` with this scope as the current scope, in `body`, what it awaits and the
    /// child tasks it creates.
    ///
    /// ```swift
    /// try await request.withCurrent { try await OrderHandler().handle() }
    /// ```
    /// - Parameters:
    ///   - isolation: The caller's actor, inherited: `body` runs on it.
    ///   - body: The code to run.
    /// - Returns: What `body` returns.
    public func withCurrent<Result>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Result
    ) async rethrows -> Result {
        try await Scope.$bound.withValue(self, operation: body, isolation: isolation)
    }
}

extension Container {
    /// The container the app designates once at start-up (DICE's `use`, Kraken's global container): the
    /// current scope wherever no factory runs and no scope is bound with ``Scope/withCurrent(_:)``. Nil until set.
    ///
    /// ```swift
    /// @main struct App {
    ///     static func main() {
    ///         let container = Container()
    ///         container.install(AppModule())
    ///         Container.default = container
    ///     }
    /// }
    /// ```
    /// The container is held until it is replaced or set to nil.
    public static var `default`: Container? {
        get { DefaultContainer.lock.withLock { DefaultContainer.container } }
        set {
            var replaced = newValue
            DefaultContainer.lock.withLock { swap(&replaced, &DefaultContainer.container) }
            // Released with the lock released: releasing a container disposes it, and a hook or deinit may
            // read the default.
            withExtendedLifetime(replaced) {}
        }
    }
}

extension Container {
    /// Puts `container` to use, as DICE's `DICE.use(container)` does: makes it the ``default`` container and
    /// makes its `.eagerSingleton`s now, in registration order (DICE's `.single`, made as soon as the
    /// container is used).
    ///
    /// ```swift
    /// let container = Container()
    /// container.register(Api.self, reuse: .eagerSingleton) { Api() }
    /// try Container.use(container)   // Api is made here
    /// ```
    /// The container is the default even when a singleton fails: the others are made, and the error lists
    /// every failure.
    /// - Parameters:
    ///   - container: The container.
    ///   - fileID: The caller's file, for the failures' messages.
    ///   - line: The caller's line.
    /// - Throws: ``EagerSingletonFailures`` when an eager singleton could not be made.
    public static func use(_ container: Container, fileID: String = #fileID, line: Int = #line) throws(EagerSingletonFailures) {
        Container.default = container
        try container.makeEagerSingletons(fileID: fileID, line: line)
    }

    /// Puts `container` to use (see ``use(_:fileID:line:)-2nxy5``), awaiting the eager singletons whose factory
    /// is `async` or runs on the main actor.
    /// - Parameters:
    ///   - container: The container.
    ///   - fileID: The caller's file, for the failures' messages.
    ///   - line: The caller's line.
    /// - Throws: ``EagerSingletonFailures`` when an eager singleton could not be made.
    public static func use(
        _ container: Container, fileID: String = #fileID, line: Int = #line
    ) async throws(EagerSingletonFailures) {
        Container.default = container
        try await container.makeEagerSingletons(fileID: fileID, line: line)
    }
}

/// The storage of ``Container/default``.
private enum DefaultContainer {
    static let lock = Lock()
    /// Guarded by `lock`.
    nonisolated(unsafe) static var container: Container?
}

/// Resolves `Service` from the current scope (Kraken's global `inject`).
///
/// ```swift
/// let api = try inject(Api.self)
/// let cache: Cache = try inject(key: "images")
/// ```
/// - Parameters:
///   - type: The service type.
///   - key: The registration key, or nil.
///   - fileID: The caller's file, for the error message.
///   - line: The caller's line.
/// - Returns: The instance.
/// - Throws: ``ResolutionError``: ``ResolutionError/Code/noCurrentScope`` when there is no current scope,
///   or why the service could not be resolved from it.
public func inject<Service>(
    _ type: Service.Type = Service.self, key: AnyHashable? = nil, fileID: String = #fileID, line: Int = #line
) throws(ResolutionError) -> Service {
    try Scope.current(resolving: ServiceKey(service: Service.self, key: key), fileID: fileID, line: line)
        .require(Service.self, key: key, fileID: fileID, line: line)
}

/// Resolves `Service` from the current scope, awaiting an `async` (or main-actor) factory.
///
/// ```swift
/// let feed = try await inject(Feed.self)
/// ```
/// - Parameters:
///   - type: The service type.
///   - key: The registration key, or nil.
///   - fileID: The caller's file, for the error message.
///   - line: The caller's line.
/// - Returns: The instance.
/// - Throws: ``ResolutionError`` (``ResolutionError/Code/noCurrentScope`` when there is no current scope),
///   or `CancellationError` when the task is cancelled while it waits for another task's creation.
public func inject<Service>(
    _ type: Service.Type = Service.self, key: AnyHashable? = nil, fileID: String = #fileID, line: Int = #line
) async throws -> Service {
    try await Scope.current(resolving: ServiceKey(service: Service.self, key: key), fileID: fileID, line: line)
        .require(Service.self, key: key, fileID: fileID, line: line)
}
