/// Something services resolve from: the ``Container`` (through its root scope) or a ``Scope``.
///
/// Every resolve form comes in two flavours with the same parameters: `resolve` returns nil when the
/// service can't be had, `require` throws a ``ResolutionError`` that says why and what to do.
public protocol Resolving: Sendable {
    /// The scope resolutions start from: the root scope for a container, the scope itself for a scope.
    var resolutionScope: Scope { get }
}

extension Resolving {
    /// Resolves a service registered without arguments or key.
    ///
    /// ```swift
    /// let foo = container.resolve(Foo.self)
    /// let keyed = container.resolve(Foo.self, key: "A")
    /// ```
    /// - Parameter type: The service type.
    /// - Returns: The instance, or nil when it can't be resolved (`require(_:fileID:line:)` says why).
    @inlinable
    public func resolve<Service>(_ type: Service.Type = Service.self) -> Service? {
        try? resolutionScope.resolveInstance(Service.self, ())
    }

    /// Resolves a keyed service registered without arguments.
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: The registration key, or nil for the unkeyed registration.
    /// - Returns: The instance, or nil when it can't be resolved (`require(_:key:fileID:line:)` says why).
    @inlinable
    public func resolve<Service>(_ type: Service.Type = Service.self, key: AnyHashable?) -> Service? {
        try? resolutionScope.resolveInstance(Service.self, (), key: key)
    }

    /// Resolves a keyed service registered without arguments, the key of a concrete type.
    ///
    /// The same as passing the key as `AnyHashable?`, and what a literal or typed key (`"x"`, an enum
    /// case, an `Int`) calls: the lookup hashes and compares it as its own type, without boxing it.
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: The registration key; an `Optional` key that is nil means the unkeyed registration.
    /// - Returns: The instance, or nil when it can't be resolved (`require(_:key:fileID:line:)` says why).
    @inlinable
    public func resolve<Service, Key: Hashable>(_ type: Service.Type = Service.self, key: Key) -> Service? {
        try? resolutionScope.resolveInstance(Service.self, (), typedKey: key)
    }

    /// Resolves a service registered with runtime arguments.
    ///
    /// ```swift
    /// let person = container.resolve(Person.self, ("Bill", "Gates"))
    /// let keyed = container.resolve(Person.self, ("Bill", "Gates"), "A")
    /// ```
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    /// - Returns: The instance, or nil when it can't be resolved.
    @inlinable
    public func resolve<Service, Args>(_ type: Service.Type, _ arguments: Args) -> Service? {
        try? resolutionScope.resolveInstance(Service.self, arguments)
    }

    /// Resolves a keyed service registered with runtime arguments.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    ///   - key: The registration key, or nil.
    /// - Returns: The instance, or nil when it can't be resolved.
    @inlinable
    public func resolve<Service, Args>(_ type: Service.Type, _ arguments: Args, _ key: AnyHashable?) -> Service? {
        try? resolutionScope.resolveInstance(Service.self, arguments, key: key)
    }

    /// Resolves a keyed service registered with runtime arguments, the key of a concrete type.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    ///   - key: The registration key; an `Optional` key that is nil means the unkeyed registration.
    /// - Returns: The instance, or nil when it can't be resolved.
    @inlinable
    public func resolve<Service, Args, Key: Hashable>(_ type: Service.Type, _ arguments: Args, _ key: Key) -> Service? {
        try? resolutionScope.resolveInstance(Service.self, arguments, typedKey: key)
    }

    /// Resolves a keyed service registered with runtime arguments, the key labelled.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    ///   - key: The registration key, or nil.
    /// - Returns: The instance, or nil when it can't be resolved.
    @inlinable
    public func resolve<Service, Args>(_ type: Service.Type, _ arguments: Args, key: AnyHashable?) -> Service? {
        try? resolutionScope.resolveInstance(Service.self, arguments, key: key)
    }

    /// Resolves a keyed service registered with runtime arguments, the key labelled and of a concrete type.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    ///   - key: The registration key; an `Optional` key that is nil means the unkeyed registration.
    /// - Returns: The instance, or nil when it can't be resolved.
    @inlinable
    public func resolve<Service, Args, Key: Hashable>(_ type: Service.Type, _ arguments: Args, key: Key) -> Service? {
        try? resolutionScope.resolveInstance(Service.self, arguments, typedKey: key)
    }

    /// Resolves a service registered without arguments or key, or throws why it can't.
    /// - Parameters:
    ///   - type: The service type.
    ///   - fileID: The caller's file, for the error message.
    ///   - line: The caller's line.
    /// - Returns: The instance.
    /// - Throws: ``ResolutionError``: nothing registered, a dependency cycle, a disposed scope, or a
    ///   factory that threw.
    @inlinable
    public func require<Service>(
        _ type: Service.Type = Service.self, fileID: String = #fileID, line: Int = #line
    ) throws(ResolutionError) -> Service {
        do {
            return try resolutionScope.resolveInstance(Service.self, ())
        } catch {
            throw resolutionScope.explained(error, fileID: fileID, line: line)
        }
    }

    /// Resolves a keyed service registered without arguments, or throws why it can't.
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: The registration key, or nil.
    ///   - fileID: The caller's file, for the error message.
    ///   - line: The caller's line.
    /// - Returns: The instance.
    /// - Throws: ``ResolutionError``.
    @inlinable
    public func require<Service>(
        _ type: Service.Type = Service.self, key: AnyHashable?, fileID: String = #fileID, line: Int = #line
    ) throws(ResolutionError) -> Service {
        do {
            return try resolutionScope.resolveInstance(Service.self, (), key: key)
        } catch {
            throw resolutionScope.explained(error, fileID: fileID, line: line)
        }
    }

    /// Resolves a keyed service registered without arguments, the key of a concrete type, or throws why it can't.
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: The registration key; an `Optional` key that is nil means the unkeyed registration.
    ///   - fileID: The caller's file, for the error message.
    ///   - line: The caller's line.
    /// - Returns: The instance.
    /// - Throws: ``ResolutionError``.
    @inlinable
    public func require<Service, Key: Hashable>(
        _ type: Service.Type = Service.self, key: Key, fileID: String = #fileID, line: Int = #line
    ) throws(ResolutionError) -> Service {
        do {
            return try resolutionScope.resolveInstance(Service.self, (), typedKey: key)
        } catch {
            throw resolutionScope.explained(error, fileID: fileID, line: line)
        }
    }

    /// Resolves a service registered with runtime arguments, or throws why it can't.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    ///   - fileID: The caller's file, for the error message.
    ///   - line: The caller's line.
    /// - Returns: The instance.
    /// - Throws: ``ResolutionError``.
    @inlinable
    public func require<Service, Args>(
        _ type: Service.Type, _ arguments: Args, fileID: String = #fileID, line: Int = #line
    ) throws(ResolutionError) -> Service {
        do {
            return try resolutionScope.resolveInstance(Service.self, arguments)
        } catch {
            throw resolutionScope.explained(error, fileID: fileID, line: line)
        }
    }

    /// Resolves a keyed service registered with runtime arguments, or throws why it can't.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    ///   - key: The registration key, or nil.
    ///   - fileID: The caller's file, for the error message.
    ///   - line: The caller's line.
    /// - Returns: The instance.
    /// - Throws: ``ResolutionError``.
    @inlinable
    public func require<Service, Args>(
        _ type: Service.Type, _ arguments: Args, _ key: AnyHashable?, fileID: String = #fileID, line: Int = #line
    ) throws(ResolutionError) -> Service {
        do {
            return try resolutionScope.resolveInstance(Service.self, arguments, key: key)
        } catch {
            throw resolutionScope.explained(error, fileID: fileID, line: line)
        }
    }

    /// Resolves a keyed service registered with runtime arguments, the key of a concrete type, or
    /// throws why it can't.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    ///   - key: The registration key; an `Optional` key that is nil means the unkeyed registration.
    ///   - fileID: The caller's file, for the error message.
    ///   - line: The caller's line.
    /// - Returns: The instance.
    /// - Throws: ``ResolutionError``.
    @inlinable
    public func require<Service, Args, Key: Hashable>(
        _ type: Service.Type, _ arguments: Args, _ key: Key, fileID: String = #fileID, line: Int = #line
    ) throws(ResolutionError) -> Service {
        do {
            return try resolutionScope.resolveInstance(Service.self, arguments, typedKey: key)
        } catch {
            throw resolutionScope.explained(error, fileID: fileID, line: line)
        }
    }

    /// Resolves a keyed service registered with runtime arguments, the key labelled, or throws why it can't.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    ///   - key: The registration key, or nil.
    ///   - fileID: The caller's file, for the error message.
    ///   - line: The caller's line.
    /// - Returns: The instance.
    /// - Throws: ``ResolutionError``.
    @inlinable
    public func require<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?, fileID: String = #fileID, line: Int = #line
    ) throws(ResolutionError) -> Service {
        try require(type, arguments, key, fileID: fileID, line: line)
    }

    /// Resolves a keyed service registered with runtime arguments, the key labelled and of a concrete type, or
    /// throws why it can't.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    ///   - key: The registration key; an `Optional` key that is nil means the unkeyed registration.
    ///   - fileID: The caller's file, for the error message.
    ///   - line: The caller's line.
    /// - Returns: The instance.
    /// - Throws: ``ResolutionError``.
    @inlinable
    public func require<Service, Args, Key: Hashable>(
        _ type: Service.Type, _ arguments: Args, key: Key, fileID: String = #fileID, line: Int = #line
    ) throws(ResolutionError) -> Service {
        try require(type, arguments, key, fileID: fileID, line: line)
    }

    /// Opens a child scope of ``resolutionScope``, or returns the open child that already has `key`
    /// (``ScopeSharing/byKey``): a user's session, which that user's requests share. A scope that no other
    /// caller gets (a request keyed by a client-supplied id) is opened with `sharing: .never`.
    /// - Parameter key: Any hashable value: a request id, a screen, a session.
    /// - Returns: The child scope.
    public func openScope(_ key: AnyHashable) -> Scope {
        resolutionScope.openScope(key)
    }

    /// Opens a child scope of ``resolutionScope`` with `key`: with ``ScopeSharing/byKey``, or returns the open
    /// child that has an equal key; with ``ScopeSharing/never``, a new child even when an open child has an equal
    /// key, which no lookup by key returns (`scope[key]`, `openScope(key)`, `disposeScope(key)`).
    ///
    /// ```swift
    /// // Two requests may send the same X-Request-ID: each gets a scope of its own, disposed by it alone.
    /// let request = container.openScope(requestID, sharing: .never)
    /// defer { request.dispose() }
    /// ```
    /// - Parameters:
    ///   - key: Any hashable value: a request id, a screen, a session.
    ///   - sharing: Whether an open child with an equal key is returned.
    /// - Returns: The child scope.
    public func openScope(_ key: AnyHashable, sharing: ScopeSharing) -> Scope {
        resolutionScope.openScope(key, sharing: sharing)
    }

    /// Opens a child scope of ``resolutionScope`` with `key`, shared or of the caller's own (see
    /// ``openScope(_:sharing:)-(AnyHashable,ScopeSharing)``): what a key of a concrete type calls.
    /// - Parameters:
    ///   - key: Any hashable value: a request id, a screen, a session.
    ///   - sharing: Whether an open child with an equal key is returned.
    /// - Returns: The child scope.
    @inlinable
    public func openScope<Key: Hashable>(_ key: Key, sharing: ScopeSharing) -> Scope {
        resolutionScope.openScope(key, sharing: sharing)
    }

    /// Opens a child scope of ``resolutionScope``, or returns the open child that already has `key`: the same
    /// as passing the key as `AnyHashable`, and what a key of a concrete type calls (an `Int` or `String` key,
    /// a request id, is kept as itself, without building an `AnyHashable`).
    /// - Parameter key: Any hashable value: a request id, a screen, a session.
    /// - Returns: The child scope.
    @inlinable
    public func openScope<Key: Hashable>(_ key: Key) -> Scope {
        resolutionScope.openScope(key)
    }

    /// Disposes `scope` and its subtree; does nothing for a scope of another container.
    ///
    /// Unavailable in asynchronous code, where `await disposeScope(scope)` awaits the asynchronous hooks (see
    /// ``Scope/dispose()-3kxxz``).
    /// - Parameter scope: The scope to dispose.
    /// - Returns: The disposal hooks that threw.
    @available(
        *, noasync,
        message: "it leaves async hooks unawaited; in async code write 'await disposeScope(scope)'"
    )
    @discardableResult
    public func disposeScope(_ scope: Scope) -> [DisposalFailure] {
        guard scope.registry === resolutionScope.registry else { return [] }
        return scope.dispose()
    }

    /// Disposes the open child scope with `key` that shares it (opened ``ScopeSharing/byKey``), if any, and its
    /// subtree.
    ///
    /// Unavailable in asynchronous code, where `await disposeScope(key)` awaits the asynchronous hooks.
    /// - Parameter key: The child's key.
    /// - Returns: The disposal hooks that threw.
    @available(
        *, noasync,
        message: "it leaves async hooks unawaited; in async code write 'await disposeScope(key)'"
    )
    @discardableResult
    public func disposeScope(_ key: AnyHashable) -> [DisposalFailure] {
        resolutionScope[key]?.dispose() ?? []
    }

    /// Disposes `scope` and its subtree, awaiting the asynchronous hooks; does nothing for a scope of another
    /// container.
    /// - Parameter scope: The scope to dispose.
    /// - Returns: The disposal hooks that threw.
    @discardableResult
    public func disposeScope(_ scope: Scope) async -> [DisposalFailure] {
        guard scope.registry === resolutionScope.registry else { return [] }
        return await scope.dispose()
    }

    /// Disposes the open child scope with `key` that shares it (opened ``ScopeSharing/byKey``), if any, and its
    /// subtree, awaiting the asynchronous hooks.
    /// - Parameter key: The child's key.
    /// - Returns: The disposal hooks that threw.
    @discardableResult
    public func disposeScope(_ key: AnyHashable) async -> [DisposalFailure] {
        await resolutionScope[key]?.dispose() ?? []
    }

    /// The open child scopes of ``resolutionScope``, in the order they were opened (a server checks after a
    /// load test that no request scope is left open).
    public var openScopes: [Scope] {
        resolutionScope.registry.lock.withLock { locked in resolutionScope.openChildrenInOrder(locked) }
    }

    /// How many child scopes of ``resolutionScope`` are open.
    public var openScopeCount: Int { openScopes.count }

    /// Opens a new child scope that no other caller can get: its key is made for it (an
    /// ``AnonymousScopeKey``). For a scope per request, so that two requests never share one.
    /// - Returns: The child scope.
    public func openScope() -> Scope {
        resolutionScope.openAnonymousScope()
    }

    /// Opens a child scope of its own (with `key`, ``ScopeSharing/never``, or anonymous when `key` is nil), runs
    /// `body` with it, and disposes it however `body` ends: it returns or throws.
    ///
    /// ```swift
    /// let response = try container.withScope { request in
    ///     request.provide(httpRequest)
    ///     return try request.require(Handler.self).handle()
    /// }
    /// ```
    /// - Parameters:
    ///   - key: The child's key, opened ``ScopeSharing/never``, or nil (the default) for an anonymous scope:
    ///     either way a new scope, never shared (another caller with an equal key gets another).
    ///   - body: The work to do in the scope.
    /// - Returns: What `body` returns.
    public func withScope<Result>(_ key: AnyHashable? = nil, _ body: (Scope) throws -> Result) rethrows -> Result {
        try withScope(key, onDisposalFailures: { _ in }, body)
    }

    /// Opens a child scope of its own (with `key`, ``ScopeSharing/never``, or anonymous when `key` is nil), runs
    /// `body` with it, disposes it however `body` ends, and passes the disposal hooks that threw to `report`.
    ///
    /// ```swift
    /// let response = try container.withScope(onDisposalFailures: { log.error("\($0)") }) { request in
    ///     try request.require(Handler.self).handle()
    /// }
    /// ```
    /// - Parameters:
    ///   - key: The child's key, opened ``ScopeSharing/never``, or nil (the default) for an anonymous scope:
    ///     either way a new scope, never shared (another caller with an equal key gets another).
    ///   - report: Called once after the disposal when any hook threw, before `body`'s error (if any) is rethrown.
    ///   - body: The work to do in the scope.
    /// - Returns: What `body` returns.
    public func withScope<Result>(
        _ key: AnyHashable? = nil, onDisposalFailures report: ([DisposalFailure]) -> Void, _ body: (Scope) throws -> Result
    ) rethrows -> Result {
        let scope = resolutionScope.openOwnScope(key)
        defer {
            let failures = scope.dispose()
            if !failures.isEmpty { report(failures) }
        }
        return try body(scope)
    }

    /// Opens a child scope of its own (with `key`, ``ScopeSharing/never``, or anonymous when `key` is nil), runs
    /// the asynchronous `body` with it, and disposes it, awaiting its asynchronous hooks, however `body` ends: it
    /// returns, throws or is cancelled (then the hooks run in a task of their own, so that they are not cancelled
    /// too).
    ///
    /// ```swift
    /// let response = try await container.withScope { request in
    ///     request.provide(httpRequest)
    ///     return try await request.withCurrent { try await Router().respond() }
    /// }
    /// ```
    /// - Parameters:
    ///   - key: The child's key, opened ``ScopeSharing/never``, or nil (the default) for an anonymous scope:
    ///     either way a new scope, never shared (another caller with an equal key gets another).
    ///   - isolation: The caller's actor, inherited: `body` runs on it.
    ///   - body: The work to do in the scope.
    /// - Returns: What `body` returns.
    public func withScope<Result>(
        _ key: AnyHashable? = nil, isolation: isolated (any Actor)? = #isolation, _ body: (Scope) async throws -> Result
    ) async rethrows -> Result {
        try await withScope(key, isolation: isolation, onDisposalFailures: { _ in }, body)
    }

    /// Opens a child scope of its own (with `key`, ``ScopeSharing/never``, or anonymous when `key` is nil), runs
    /// the asynchronous `body` with it, disposes it, awaiting its asynchronous hooks, however `body` ends (see
    /// ``withScope(_:isolation:_:)``), and passes the disposal hooks that threw to `report`.
    ///
    /// ```swift
    /// let response = try await container.withScope(onDisposalFailures: { logger.error("\($0)") }) { request in
    ///     try await request.require(Handler.self).handle()
    /// }
    /// ```
    /// - Parameters:
    ///   - key: The child's key, opened ``ScopeSharing/never``, or nil (the default) for an anonymous scope:
    ///     either way a new scope, never shared (another caller with an equal key gets another).
    ///   - isolation: The caller's actor, inherited: `body` runs on it.
    ///   - report: Called once after the disposal when any hook threw, before `body`'s error (if any) is rethrown.
    ///   - body: The work to do in the scope.
    /// - Returns: What `body` returns.
    public func withScope<Result>(
        _ key: AnyHashable? = nil, isolation: isolated (any Actor)? = #isolation,
        onDisposalFailures report: ([DisposalFailure]) -> Void, _ body: (Scope) async throws -> Result
    ) async rethrows -> Result {
        let scope = resolutionScope.openOwnScope(key)
        let result: Result
        do {
            result = try await body(scope)
        } catch {
            let failures = await Self.disposeUncancelled(scope)
            if !failures.isEmpty { report(failures) }
            throw error
        }
        let failures = await Self.disposeUncancelled(scope)
        if !failures.isEmpty { report(failures) }
        return result
    }

    /// Awaits `scope`'s disposal, in a task of its own when this one is cancelled: a hook that closes a
    /// connection must not find itself cancelled because the request was.
    /// - Returns: The disposal hooks that threw.
    private static func disposeUncancelled(_ scope: Scope) async -> [DisposalFailure] {
        if Task.isCancelled {
            return await Task { await scope.dispose() }.value
        } else {
            return await scope.dispose()
        }
    }
}

/// The key of a scope opened with ``Resolving/openScope()``: unique among its siblings, and made only by
/// Stimpak, so no other caller can open or find that scope by key.
public struct AnonymousScopeKey: Hashable, Sendable, CustomStringConvertible {
    let number: Int

    public var description: String { "anonymous scope #\(number)" }
}

extension Scope {
    /// `error` with what only `require` reports: the registered alternatives and the call site.
    @usableFromInline
    func explained(_ error: ResolutionError, fileID: String, line: Int) -> ResolutionError {
        var error = error
        if error.code == .notRegistered, error.registeredAlternatives.isEmpty {
            error.registeredAlternatives = registry.lock.withLock { locked in registry.alternatives(to: error.requested, locked) }
        }
        if error.fileID.isEmpty {
            error.fileID = fileID
            error.line = line
        }
        return error
    }
}
