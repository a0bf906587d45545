/// The `async` resolve forms: the same parameters as the synchronous ones, for services whose factory is
/// `async` and for any other from async code.
///
/// A cached instance, or a service with a synchronous factory, resolves without a suspension and at the cost
/// of the synchronous form; a creation by an `async` factory is awaited, exactly once per cache however
/// many tasks want it, and a task waiting for another's creation suspends (no thread blocks). In an `async`
/// context Swift picks these forms, so write `try await scope.require(…)` there.
extension Resolving {
    /// Resolves a service registered without arguments or key.
    ///
    /// ```swift
    /// let foo = await container.resolve(Foo.self)
    /// let keyed = await container.resolve(Foo.self, key: "A")
    /// ```
    /// - Parameter type: The service type.
    /// - Returns: The instance, or nil when it can't be resolved (`require(_:fileID:line:)` says why).
    @inlinable @inline(__always)
    public func resolve<Service>(_ type: Service.Type = Service.self) async -> Service? {
        try? await resolutionScope.resolveInstanceAsync(Service.self, ())
    }

    /// Resolves a keyed service registered without arguments.
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: The registration key, or nil for the unkeyed registration.
    /// - Returns: The instance, or nil when it can't be resolved (`require(_:key:fileID:line:)` says why).
    @inlinable @inline(__always)
    public func resolve<Service>(_ type: Service.Type = Service.self, key: AnyHashable?) async -> Service? {
        try? await resolutionScope.resolveInstanceAsync(Service.self, (), key: key)
    }

    /// Resolves a keyed service registered without arguments, the key of a concrete type.
    ///
    /// The same as passing the key as `AnyHashable?`, and what a literal or typed key (`"x"`, an enum
    /// case, an `Int`) calls: the lookup hashes and compares it as its own type, without boxing it.
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: The registration key; an `Optional` key that is nil means the unkeyed registration.
    /// - Returns: The instance, or nil when it can't be resolved (`require(_:key:fileID:line:)` says why).
    @inlinable @inline(__always)
    public func resolve<Service, Key: Hashable>(_ type: Service.Type = Service.self, key: Key) async -> Service? {
        try? await resolutionScope.resolveInstanceAsync(Service.self, (), typedKey: key)
    }

    /// Resolves a service registered with runtime arguments.
    ///
    /// ```swift
    /// let person = await container.resolve(Person.self, ("Bill", "Gates"))
    /// let keyed = await container.resolve(Person.self, ("Bill", "Gates"), "A")
    /// ```
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    /// - Returns: The instance, or nil when it can't be resolved.
    @inlinable @inline(__always)
    public func resolve<Service, Args>(_ type: Service.Type, _ arguments: Args) async -> Service? {
        try? await resolutionScope.resolveInstanceAsync(Service.self, arguments)
    }

    /// Resolves a keyed service registered with runtime arguments.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    ///   - key: The registration key, or nil.
    /// - Returns: The instance, or nil when it can't be resolved.
    @inlinable @inline(__always)
    public func resolve<Service, Args>(_ type: Service.Type, _ arguments: Args, _ key: AnyHashable?) async -> Service? {
        try? await resolutionScope.resolveInstanceAsync(Service.self, arguments, key: key)
    }

    /// Resolves a keyed service registered with runtime arguments, the key of a concrete type.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    ///   - key: The registration key; an `Optional` key that is nil means the unkeyed registration.
    /// - Returns: The instance, or nil when it can't be resolved.
    @inlinable @inline(__always)
    public func resolve<Service, Args, Key: Hashable>(_ type: Service.Type, _ arguments: Args, _ key: Key) async -> Service? {
        try? await resolutionScope.resolveInstanceAsync(Service.self, arguments, typedKey: key)
    }

    /// Resolves a keyed service registered with runtime arguments, the key labelled.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    ///   - key: The registration key, or nil.
    /// - Returns: The instance, or nil when it can't be resolved.
    @inlinable @inline(__always)
    public func resolve<Service, Args>(_ type: Service.Type, _ arguments: Args, key: AnyHashable?) async -> Service? {
        try? await resolutionScope.resolveInstanceAsync(Service.self, arguments, key: key)
    }

    /// Resolves a keyed service registered with runtime arguments, the key labelled and of a concrete type.
    /// - Parameters:
    ///   - type: The service type.
    ///   - arguments: The factory's arguments: a value for one, a tuple for several.
    ///   - key: The registration key; an `Optional` key that is nil means the unkeyed registration.
    /// - Returns: The instance, or nil when it can't be resolved.
    @inlinable @inline(__always)
    public func resolve<Service, Args, Key: Hashable>(_ type: Service.Type, _ arguments: Args, key: Key) async -> Service? {
        try? await resolutionScope.resolveInstanceAsync(Service.self, arguments, typedKey: key)
    }

    /// Resolves a service registered without arguments or key, or throws why it can't.
    /// - Parameters:
    ///   - type: The service type.
    ///   - fileID: The caller's file, for the error message.
    ///   - line: The caller's line.
    /// - Returns: The instance.
    /// - Throws: ``ResolutionError``: nothing registered, a dependency cycle, a disposed scope, or a
    ///   factory that threw; `CancellationError` when the task is cancelled while it waits for another
    ///   task's creation of the instance (which goes on for the others).
    @inlinable @inline(__always)
    public func require<Service>(
        _ type: Service.Type = Service.self, fileID: String = #fileID, line: Int = #line
    ) async throws -> Service {
        do {
            return try await resolutionScope.resolveInstanceAsync(Service.self, ())
        } catch let error as ResolutionError {
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
    /// - Throws: ``ResolutionError``, or `CancellationError` when the task is cancelled while it waits.
    @inlinable @inline(__always)
    public func require<Service>(
        _ type: Service.Type = Service.self, key: AnyHashable?, fileID: String = #fileID, line: Int = #line
    ) async throws -> Service {
        do {
            return try await resolutionScope.resolveInstanceAsync(Service.self, (), key: key)
        } catch let error as ResolutionError {
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
    /// - Throws: ``ResolutionError``, or `CancellationError` when the task is cancelled while it waits.
    @inlinable @inline(__always)
    public func require<Service, Key: Hashable>(
        _ type: Service.Type = Service.self, key: Key, fileID: String = #fileID, line: Int = #line
    ) async throws -> Service {
        do {
            return try await resolutionScope.resolveInstanceAsync(Service.self, (), typedKey: key)
        } catch let error as ResolutionError {
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
    /// - Throws: ``ResolutionError``, or `CancellationError` when the task is cancelled while it waits.
    @inlinable @inline(__always)
    public func require<Service, Args>(
        _ type: Service.Type, _ arguments: Args, fileID: String = #fileID, line: Int = #line
    ) async throws -> Service {
        do {
            return try await resolutionScope.resolveInstanceAsync(Service.self, arguments)
        } catch let error as ResolutionError {
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
    /// - Throws: ``ResolutionError``, or `CancellationError` when the task is cancelled while it waits.
    @inlinable @inline(__always)
    public func require<Service, Args>(
        _ type: Service.Type, _ arguments: Args, _ key: AnyHashable?, fileID: String = #fileID, line: Int = #line
    ) async throws -> Service {
        do {
            return try await resolutionScope.resolveInstanceAsync(Service.self, arguments, key: key)
        } catch let error as ResolutionError {
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
    /// - Throws: ``ResolutionError``, or `CancellationError` when the task is cancelled while it waits.
    @inlinable @inline(__always)
    public func require<Service, Args, Key: Hashable>(
        _ type: Service.Type, _ arguments: Args, _ key: Key, fileID: String = #fileID, line: Int = #line
    ) async throws -> Service {
        do {
            return try await resolutionScope.resolveInstanceAsync(Service.self, arguments, typedKey: key)
        } catch let error as ResolutionError {
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
    /// - Throws: ``ResolutionError``, or `CancellationError` when the task is cancelled while it waits.
    @inlinable @inline(__always)
    public func require<Service, Args>(
        _ type: Service.Type, _ arguments: Args, key: AnyHashable?, fileID: String = #fileID, line: Int = #line
    ) async throws -> Service {
        try await require(type, arguments, key, fileID: fileID, line: line)
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
    /// - Throws: ``ResolutionError``, or `CancellationError` when the task is cancelled while it waits.
    @inlinable @inline(__always)
    public func require<Service, Args, Key: Hashable>(
        _ type: Service.Type, _ arguments: Args, key: Key, fileID: String = #fileID, line: Int = #line
    ) async throws -> Service {
        try await require(type, arguments, key, fileID: fileID, line: line)
    }

}
