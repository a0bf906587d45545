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
    /// - Returns: The instance, or nil when it can't be resolved (``require(_:fileID:line:)`` says why).
    @inlinable
    public func resolve<Service>(_ type: Service.Type = Service.self) -> Service? {
        try? resolutionScope.resolveInstance(Service.self, ())
    }

    /// Resolves a keyed service registered without arguments.
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: The registration key, or nil for the unkeyed registration.
    /// - Returns: The instance, or nil when it can't be resolved (``require(_:key:fileID:line:)`` says why).
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
    /// - Returns: The instance, or nil when it can't be resolved (``require(_:key:fileID:line:)`` says why).
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
    /// - Parameter type: The service type.
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
    /// - Returns: The instance.
    /// - Throws: ``ResolutionError``.
    @inlinable
    public func require<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?, fileID: String = #fileID, line: Int = #line
    ) throws(ResolutionError) -> Service {
        do {
            return try resolutionScope.resolveInstance(Service.self, arguments, key: key)
        } catch {
            throw resolutionScope.explained(error, fileID: fileID, line: line)
        }
    }

    /// Resolves a keyed service registered with runtime arguments, the key labelled and of a concrete type, or
    /// throws why it can't.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    ///   - key: The registration key; an `Optional` key that is nil means the unkeyed registration.
    /// - Returns: The instance.
    /// - Throws: ``ResolutionError``.
    @inlinable
    public func require<Service, Args, Key: Hashable>(
        _ type: Service.Type, _ arguments: Args, key: Key, fileID: String = #fileID, line: Int = #line
    ) throws(ResolutionError) -> Service {
        do {
            return try resolutionScope.resolveInstance(Service.self, arguments, typedKey: key)
        } catch {
            throw resolutionScope.explained(error, fileID: fileID, line: line)
        }
    }

    /// Opens a child scope of ``resolutionScope``, or returns the open child that already has `key`.
    /// - Parameter key: Any hashable value: a request id, a screen, a session.
    /// - Returns: The child scope.
    public func openScope(_ key: AnyHashable) -> Scope {
        resolutionScope.openScope(key)
    }

    /// Disposes `scope` and its subtree; does nothing for a scope of another container.
    /// - Parameter scope: The scope to dispose.
    /// - Returns: The disposal hooks that threw.
    @discardableResult
    public func disposeScope(_ scope: Scope) -> [DisposalFailure] {
        guard scope.registry === resolutionScope.registry else { return [] }
        return scope.dispose()
    }

    /// Disposes the open child scope with `key`, if any, and its subtree.
    /// - Parameter key: The child's key.
    /// - Returns: The disposal hooks that threw.
    @discardableResult
    public func disposeScope(_ key: AnyHashable) -> [DisposalFailure] {
        resolutionScope[key]?.dispose() ?? []
    }
}

extension Scope {
    /// `error` with what only `require` reports: the registered alternatives and the call site.
    @usableFromInline
    func explained(_ error: ResolutionError, fileID: String, line: Int) -> ResolutionError {
        var error = error
        if error.code == .notRegistered, error.registeredAlternatives.isEmpty {
            error.registeredAlternatives = registry.lock.withLock { registry.alternatives(to: error.requested) }
        }
        if error.fileID.isEmpty {
            error.fileID = fileID
            error.line = line
        }
        return error
    }
}
