/// A service type that every scope resolves without a registration, from the registration of the service it
/// wraps: ``Lazy``, ``Provider``, ``ArgumentProvider``, ``WeakReference``, and an array of every registration of a service.
protocol ImplicitService {
    /// The wrapped service: what an autowired parameter of this type depends on.
    static var wrappedService: ServiceKey { get }
    /// How a factory that takes this wrapper needs the wrapped service.
    static var dependencyKind: Dependency.Kind { get }
    /// The wrapper for the wrapped service under `key`, resolved from `scope`.
    static func implicitInstance(from scope: Scope, key: AnyHashable?) throws(ResolutionError) -> Self
    /// The same for an `await` resolve, awaiting what only an `await` can make (an array's elements whose factories
    /// are `async`).
    static func implicitInstanceAwaiting(from scope: Scope, key: AnyHashable?) async throws -> Self
}

extension ImplicitService {
    static func implicitInstanceAwaiting(from scope: Scope, key: AnyHashable?) async throws -> Self {
        try implicitInstance(from: scope, key: key)
    }
}

/// A `Service` resolved on first access, from the scope the `Lazy` was resolved in, and then kept.
///
/// Every scope resolves `Lazy<T>` for a registered `T` without registering it, and an autowired
/// parameter may be one:
///
/// ```swift
/// container.autowire(ReportScreen.self) { (exporter: Lazy<PDFExporter>) in ReportScreen(exporter) }
/// let pdf = try screen.exporter.value   // made now, once
/// ```
/// When threads read `value` for the first time at once, each may resolve, and all get the first instance
/// kept (for a reused service they are the same anyway): no lock is held while a factory runs.
public final class Lazy<Service> {
    /// The scope to resolve from; nil for the current scope at the first access (``LazyInjected``).
    private let scope: Scope?
    private let key: AnyHashable?
    private let lock = Lock()
    private var instance: Service?

    init(scope: Scope?, key: AnyHashable?) {
        self.scope = scope
        self.key = key
    }

    /// The instance: resolved on first access, then the same one.
    /// - Throws: ``ResolutionError`` when it cannot be resolved (then the next access tries again).
    public var value: Service {
        get throws(ResolutionError) {
            if let instance = lock.withLock({ instance }) { return instance }
            let resolved: Service = try Scope.resolving(scope, Service.self, key: key)
            return lock.withLock {
                if let instance { return instance }
                instance = resolved
                return resolved
            }
        }
    }
}

/// Shared across tasks only when its service is: the instance it keeps is handed to every reader.
/// (`instance` is guarded by `lock`.)
extension Lazy: @unchecked Sendable where Service: Sendable {}

extension Lazy: ImplicitService {
    static var wrappedService: ServiceKey { ServiceKey(service: Service.self) }
    static var dependencyKind: Dependency.Kind { .deferred }

    static func implicitInstance(from scope: Scope, key: AnyHashable?) throws(ResolutionError) -> Self {
        Self(scope: scope, key: key)
    }
}

/// A weak reference to a `Service`, resolved on first access: the way to close a cycle of references
/// (Kraken's `injectWeak`).
///
/// ```swift
/// container.register(Parent.self, reuse: .singleton) { scope in Parent(child: try scope.require(Child.self)) }
/// container.autowire(Child.self) { (parent: WeakReference<Parent>) in Child(parent: parent) }
/// try child.parent.value   // the Parent, resolved when first read, held weakly
/// ```
/// Resolving `Parent` while `Parent` is being made would be a cycle, so the reference resolves on first
/// access (by then the parent is made and cached) and keeps only a weak reference, so no cycle of strong
/// references keeps either alive.
///
/// `Service` is a class or a class-constrained protocol's existential (`WeakReference<any Delegate>` where
/// `protocol Delegate: AnyObject`). Only a class instance can be referenced weakly: when `Service` resolves
/// to a value (a struct, an enum), the first access throws ``ResolutionError/Code/weakValueType``.
public final class WeakReference<Service> {
    /// The scope to resolve from; nil for the current scope at the first access (``WeakInjected``).
    private let scope: Scope?
    private let key: AnyHashable?
    private let lock = Lock()
    /// The instance, as the object it is (`Service` may be an existential, which `weak` cannot declare).
    private weak var object: AnyObject?
    private var isResolved = false

    init(scope: Scope?, key: AnyHashable?) {
        self.scope = scope
        self.key = key
    }

    /// The instance: resolved on first access; nil once it has been released.
    /// - Throws: ``ResolutionError`` when the first access cannot resolve it (the next access tries again).
    public var value: Service? {
        get throws(ResolutionError) {
            let (object, isResolved) = lock.withLock { (self.object, self.isResolved) }
            if isResolved { return object.map(Self.service) }
            let resolved: Service = try Scope.resolving(scope, Service.self, key: key)
            // A class instance is an object as it is; a value would be boxed by `as AnyObject`, and the box gone
            // at once.
            guard type(of: resolved as Any) is AnyObject.Type else {
                var error = ResolutionError(.weakValueType, requested: ServiceKey(service: Service.self, key: key))
                error.isWeakReference = true
                throw error
            }
            let instance = resolved as AnyObject
            return lock.withLock {
                if !self.isResolved {
                    self.object = instance
                    self.isResolved = true
                }
                return self.object.map(Self.service)
            }
        }
    }
}

/// Shared across tasks only when its service is: the object it refers to is handed to every reader.
/// (Its state is guarded by `lock`.)
extension WeakReference: @unchecked Sendable where Service: Sendable {}

extension WeakReference {
    /// `object`, which was resolved as a `Service`, as one.
    private static func service(_ object: AnyObject) -> Service {
        // Only a `Service` is stored in `object`.
        object as! Service
    }
}

extension WeakReference: ImplicitService {
    static var wrappedService: ServiceKey { ServiceKey(service: Service.self) }
    static var dependencyKind: Dependency.Kind { .deferred }

    static func implicitInstance(from scope: Scope, key: AnyHashable?) throws(ResolutionError) -> Self {
        Self(scope: scope, key: key)
    }
}

extension Array: ImplicitService {
    static var wrappedService: ServiceKey { ServiceKey(service: Element.self) }
    static var dependencyKind: Dependency.Kind { .collection }

    /// Every registration of `Element` without runtime arguments, under every key (`key` is ignored), in
    /// registration order.
    static func implicitInstance(from scope: Scope, key: AnyHashable?) throws(ResolutionError) -> Self {
        if ResolutionContext.servesAwait {
            // The synchronous attempt of an `await` resolve: the array goes to the `await` path before any element
            // is made. Made here, an element that turned out to need an `await` (an `async` factory, another
            // thread's creation, a `resolved` callback) would send the array there, and the elements before it
            // would be made again.
            var error = ResolutionError(.requiresAwait, requested: ServiceKey(service: Element.self))
            error.isAwaitableHere = true
            throw error
        }
        let keys = scope.registrationKeys(of: Element.self)
        // Unexplained: the resolve of the array explains the error, naming its own caller.
        return try keys.map { registered throws(ResolutionError) in
            try scope.resolveInstance(Element.self, (), key: registered.key)
        }
    }

    /// Every registration of `Element` as ``implicitInstance(from:key:)`` resolves them, each with `await`.
    static func implicitInstanceAwaiting(from scope: Scope, key: AnyHashable?) async throws -> Self {
        var instances: [Element] = []
        for registered in scope.registrationKeys(of: Element.self) {
            instances.append(try await scope.resolveInstanceAsync(Element.self, (), key: registered.key))
        }
        return instances
    }
}

extension Resolving {
    /// Resolves every registration of `Service` without runtime arguments, under every key, in registration
    /// order (DryIoc's `ResolveMany`); registrations that fail are left out.
    ///
    /// ```swift
    /// container.register(Plugin.self, key: "pdf") { PDFPlugin() }
    /// container.register(Plugin.self, key: "csv") { CSVPlugin() }
    /// let plugins = container.resolveAll(Plugin.self)   // [PDFPlugin, CSVPlugin]
    /// ```
    /// `[Service]` resolves the same way, also as an autowired parameter (with ``requireAll(_:fileID:line:)``).
    /// - Parameter type: The service type.
    /// - Returns: The instances; empty when nothing is registered.
    public func resolveAll<Service>(_ type: Service.Type = Service.self) -> [Service] {
        resolutionScope.registrationKeys(of: Service.self).compactMap {
            try? resolutionScope.resolveInstance(Service.self, (), key: $0.key)
        }
    }

    /// Resolves every registration of `Service` without runtime arguments, under every key, in registration
    /// order, or throws the first failure.
    /// - Parameters:
    ///   - type: The service type.
    ///   - fileID: The caller's file, for the error message.
    ///   - line: The caller's line.
    /// - Returns: The instances; empty when nothing is registered.
    /// - Throws: ``ResolutionError``.
    public func requireAll<Service>(
        _ type: Service.Type = Service.self, fileID: String = #fileID, line: Int = #line
    ) throws(ResolutionError) -> [Service] {
        var instances: [Service] = []
        for key in resolutionScope.registrationKeys(of: Service.self) {
            do {
                instances.append(try resolutionScope.resolveInstance(Service.self, (), key: key.key))
            } catch {
                throw resolutionScope.explained(error, fileID: fileID, line: line)
            }
        }
        return instances
    }
}

extension Scope {
    /// The keys of the registrations of `Service` without runtime arguments that this scope sees (the
    /// container's, and those made in this scope or above it), in registration order.
    func registrationKeys<Service>(of type: Service.Type) -> [ServiceKey] {
        registry.lock.withLock { locked in
            var found: [(key: ServiceKey, index: Int)] = []
            for (key, entry) in registry.entries
            where ObjectIdentifier(key.service) == ObjectIdentifier(Service.self) && !key.hasArguments {
                if let registration = entry.registration {
                    found.append((key, registration.index))
                } else if entry.hasScopeRegistrations, let (registration, _) = scopeRegistration(for: key, locked) {
                    found.append((key, registration.index))
                }
            }
            found.sort { $0.index < $1.index }
            return found.map(\.key)
        }
    }
}

extension Scope {
    /// `Service` under `key` from `scope`, or from the current scope when it is nil (a wrapper made where no
    /// scope was current).
    static func resolving<Service>(_ scope: Scope?, _ type: Service.Type, key: AnyHashable?) throws(ResolutionError) -> Service {
        if let scope { return try scope.require(Service.self, key: key) }
        return try current(resolving: ServiceKey(service: Service.self, key: key)).require(Service.self, key: key)
    }
}
