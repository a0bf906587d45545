/// The `+=` DSL: `container += (Type, factory[, reuse[, key]])`, or `(Type, reuse)` for an `Instantiable`.
///
/// ```swift
/// container += (Foo.self, { () -> Foo in Foo() })
/// container += (Person.self, { (_ first: String, _ last: String) in Person(first, last) }, Reuse.inScope)
/// container += (Clock.self, Reuse.singleton)
/// ```
/// An existing registration with the same service, arguments and key is kept (`.skip`).
extension Resolving {
    /// Registers `(type, factory)` with the container's default reuse (`.transient` unless set).
    @_disfavoredOverload
    @inlinable
    public static func += <Service, each Arg>(
        container: Self, registration: (Service.Type, @Sendable (repeat each Arg) throws -> Service)
    ) {
        container.register(registration.0, registration.1)
    }

    /// Registers `(type, factory, reuse)`.
    @_disfavoredOverload
    @inlinable
    public static func += <Service, each Arg>(
        container: Self, registration: (Service.Type, @Sendable (repeat each Arg) throws -> Service, Reuse)
    ) {
        container.register(registration.0, registration.1, reuse: registration.2)
    }

    /// Registers `(type, factory, reuse, key)`.
    @_disfavoredOverload
    @inlinable
    public static func += <Service, each Arg>(
        container: Self,
        registration: (Service.Type, @Sendable (repeat each Arg) throws -> Service, Reuse, AnyHashable)
    ) {
        container.register(registration.0, registration.1, reuse: registration.2, key: registration.3)
    }

    /// Registers `(type, factory)`, the factory receiving the resolving scope, with the container's default reuse.
    @inlinable
    public static func += <Service, each Arg>(
        container: Self, registration: (Service.Type, @Sendable (Scope, repeat each Arg) throws -> Service)
    ) {
        container.register(registration.0, registration.1)
    }

    /// Registers `(type, factory, reuse)`, the factory receiving the resolving scope.
    @inlinable
    public static func += <Service, each Arg>(
        container: Self, registration: (Service.Type, @Sendable (Scope, repeat each Arg) throws -> Service, Reuse)
    ) {
        container.register(registration.0, registration.1, reuse: registration.2)
    }

    /// Registers an ``Instantiable`` `(type, reuse)`.
    @inlinable
    public static func += <Service: Instantiable>(container: Self, registration: (Service.Type, Reuse)) {
        container.register(registration.0, reuse: registration.1)
    }

    /// Registers an ``Instantiable`` type with the container's default reuse.
    @inlinable
    public static func += <Service: Instantiable>(container: Self, type: Service.Type) {
        container.register(type)
    }
}
