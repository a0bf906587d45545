extension Container {
    /// Wraps every instance of `Service` in another of the same type: a logging, caching or retrying wrapper
    /// around a protocol (DryIoc's decorators, Dose's `extend`).
    ///
    /// ```swift
    /// container.decorate((any Repository).self) { scope, inner in
    ///     LoggingRepository(inner, log: try scope.require(Logger.self))
    /// }
    /// ```
    /// A decorator applies to every registration of `Service` (every key, arguments and lifetime), those
    /// made before and after it, or only to the one under `key`. Decorators apply in the order they were
    /// added, the first wrapping the factory's instance; a reused instance is decorated once, and the cache
    /// holds the decorated instance. The decorator receives the scope the factory received.
    ///
    /// Every `Disposable` (or `AsyncDisposable`) layer is disposed once, outermost first: the wrappers, then
    /// the factory's instance, each object once however many layers it is. A wrapper's `dispose()` therefore
    /// releases only what the wrapper holds and does not forward to the instance it wraps, which the container
    /// disposes right after it. When a decorator throws, every layer made so far is disposed.
    /// - Parameters:
    ///   - type: The service type.
    ///   - key: Only the registration under this key; nil for all of them.
    ///   - decorator: Receives the scope and the instance, and returns the instance to hand out; may throw.
    public func decorate<Service>(
        _ type: Service.Type, key: AnyHashable? = nil,
        _ decorator: @escaping @Sendable (Scope, Service) throws -> Service
    ) {
        // Its key is interned before the lock: its `==` is user code.
        let erased = AnyDecorator(
            service: ObjectIdentifier(Service.self), keyBox: registry.registeredBox(for: key), decorator: decorator)
        registry.change { locked in
            registry.decorators.append(erased)
            for (key, entry) in registry.entries where erased.applies(to: key) {
                entry.registration?.attach(erased, locked)
                // The scopes' own registrations of the service too.
                guard entry.hasScopeRegistrations else { continue }
                for scope in root.subtreeDeepestFirst(locked) {
                    if case .registration(let registration)? = scope.locals[key] { registration.attach(erased, locked) }
                }
            }
        }
    }
}

/// A decorator of `Service`, as a registration applies it.
@usableFromInline typealias Decorator<Service> = (Scope, Service) throws -> Service

/// A decorator with its service type erased, as the registry keeps it for registrations yet to come.
struct AnyDecorator: @unchecked Sendable {  // `decorator` is a `@Sendable` closure, erased
    let service: ObjectIdentifier
    /// The key's box, as a registration keeps it (see ``Registry/registeredBox(for:)``), or nil for every key.
    let keyBox: AnyKeyBox?
    /// The `@Sendable (Scope, Service) throws -> Service` of the `Service` that `service` names.
    let decorator: Any

    /// Whether it applies to the registration of `serviceKey`, whose key is interned: no key's `==` runs, so
    /// the lock may be held.
    func applies(to serviceKey: ServiceKey) -> Bool {
        ObjectIdentifier(serviceKey.service) == service && (keyBox == nil || ServiceKey.sameKey(keyBox, serviceKey.keyBox))
    }

    /// The decorator as a registration of `Service` applies it; nil for another service type.
    func typed<Service>(_ type: Service.Type) -> Decorator<Service>? {
        decorator as? @Sendable (Scope, Service) throws -> Service
    }
}
