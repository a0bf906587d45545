/// Property wrappers that resolve from the current scope (see ``Scope/current``): DICE's `@Injected`.
///
/// The current scope is the scope of the innermost factory making the owner (the scope it runs for), else the
/// scope bound with ``Scope/withCurrent(_:)``, else the root scope of ``Container/default``: an object a
/// factory makes for a request's scope gets that request's instances, whatever scope its caller bound.
///
/// A property wrapper cannot throw. When the service cannot be resolved, these stop the program with the
/// full ``ResolutionError`` text (service, key, path, fix), as a force-unwrap would; use
/// ``OptionalInjected`` for a service that may be missing, and validate the registrations in a test.
///
/// A property wrapper reaches only services made synchronously: it resolves synchronously (`@Injected` and
/// `@OptionalInjected` when the owner is made, `@LazyInjected` and `@WeakInjected` on first read), and a
/// synchronous resolve cannot await a factory that is `async`, even in an owner made by an `async` factory. A
/// wrapper of such a service stops the program with ``ResolutionError/Code/requiresAwait``. Resolve an async
/// service with `try await scope.require(Feed.self)` in async code (an `async` factory or initializer, a
/// handler) and pass it in. ``Container/validate()`` reports every such wrapper it knows of: declare an
/// instance's wrappers on its registration with their types,
/// `.dependsOn(Injected<OrderRepository>.self, LazyInjected<PDFExporter>.self)`.

/// A service resolved from the current scope when its owner is created: the scope of the factory making the
/// owner, else the bound scope, else the default container's.
///
/// ```swift
/// final class OrderHandler {
///     @Injected var repository: OrderRepository
///     @Injected(key: "audit") var log: Logger
/// }
/// let handler = request.withCurrent { OrderHandler() }   // resolved from `request`
/// ```
@propertyWrapper
public struct Injected<Service> {
    /// The instance, resolved when the owner was created.
    public let wrappedValue: Service

    /// Resolves `Service` under `key` from the current scope, or stops the program with the reason.
    /// - Parameters:
    ///   - key: The registration key, or nil.
    ///   - fileID: The declaration's file, for the message.
    ///   - line: The declaration's line.
    public init(key: AnyHashable? = nil, fileID: String = #fileID, line: Int = #line) {
        wrappedValue = Injection.require(Service.self, key: key, by: Self.name, fileID: fileID, line: line)
    }

    /// Resolves `Service` under `key` (DICE's `@Injected("tag")`).
    /// - Parameters:
    ///   - key: The registration key.
    ///   - fileID: The declaration's file, for the message.
    ///   - line: The declaration's line.
    public init(_ key: AnyHashable, fileID: String = #fileID, line: Int = #line) {
        self.init(key: key, fileID: fileID, line: line)
    }
}

extension Injected: Sendable where Service: Sendable {}

/// A service resolved on first access, once, from the scope that was current when its owner was created (the
/// scope of the factory making the owner, else the bound scope, else the default container's), or, when there
/// was none, the one current at the first access.
///
/// ```swift
/// final class ReportScreen {
///     @LazyInjected var exporter: PDFExporter   // made when first used
/// }
/// ```
/// When threads make the first access at once, each may resolve, and all get the first instance kept.
@propertyWrapper
public struct LazyInjected<Service> {
    /// The instance: resolved on first access, then the same one.
    public var wrappedValue: Service { injection.value }

    private let injection: DeferredInjection<Lazy<Service>>

    /// Remembers the current scope and `key`; resolves on first access.
    /// - Parameters:
    ///   - key: The registration key, or nil.
    ///   - fileID: The declaration's file, for the message.
    ///   - line: The declaration's line.
    public init(key: AnyHashable? = nil, fileID: String = #fileID, line: Int = #line) {
        injection = DeferredInjection(key: key, by: Self.name, fileID: fileID, line: line)
    }

    /// Remembers the current scope and `key` (DICE's `@Injected("tag")`); resolves on first access.
    /// - Parameters:
    ///   - key: The registration key.
    ///   - fileID: The declaration's file, for the message.
    ///   - line: The declaration's line.
    public init(_ key: AnyHashable, fileID: String = #fileID, line: Int = #line) {
        self.init(key: key, fileID: fileID, line: line)
    }
}

extension LazyInjected: Sendable where Service: Sendable {}

/// A weak reference to a service, resolved on first access from the scope that was current when its owner
/// was created (the scope of the factory making the owner, else the bound scope, else the default
/// container's): for closing a cycle of references (Kraken's `injectWeak`).
///
/// ```swift
/// final class Child {
///     @WeakInjected var parent: Parent?   // Parent's factory makes the Child: resolved later, held weakly
/// }
/// ```
/// Resolving during the owner's creation would be a cycle when the service is what is making the owner,
/// so the reference resolves when first read (by then that service is made and cached) and then holds it
/// weakly: it is nil once the instance has been released.
@propertyWrapper
public struct WeakInjected<Service> {
    /// The instance, resolved on first access; nil once it has been released.
    public var wrappedValue: Service? { injection.value }

    private let injection: DeferredInjection<WeakReference<Service>>

    /// Remembers the current scope and `key`; resolves on first access.
    /// - Parameters:
    ///   - key: The registration key, or nil.
    ///   - fileID: The declaration's file, for the message.
    ///   - line: The declaration's line.
    public init(key: AnyHashable? = nil, fileID: String = #fileID, line: Int = #line) {
        injection = DeferredInjection(key: key, by: Self.name, fileID: fileID, line: line)
    }
}

extension WeakInjected: Sendable where Service: Sendable {}

/// A service resolved from the current scope when its owner is created (the scope of the factory making the
/// owner, else the bound scope, else the default container's), or nil when it is not registered.
///
/// ```swift
/// final class Checkout {
///     @OptionalInjected var analytics: Analytics?
/// }
/// ```
/// Only a missing registration of the service itself gives nil: any other failure (a missing dependency of
/// it, a cycle, a factory that throws, no current scope) stops the program with the reason, as ``Injected``.
@propertyWrapper
public struct OptionalInjected<Service> {
    /// The instance, or nil when `Service` is not registered under the key.
    public let wrappedValue: Service?

    /// Resolves `Service` under `key` from the current scope.
    /// - Parameters:
    ///   - key: The registration key, or nil.
    ///   - fileID: The declaration's file, for the message.
    ///   - line: The declaration's line.
    public init(key: AnyHashable? = nil, fileID: String = #fileID, line: Int = #line) {
        let requested = ServiceKey(service: Service.self, key: key)
        do throws(ResolutionError) {
            wrappedValue = try Scope.current(resolving: requested).require(Service.self, key: key, fileID: fileID, line: line)
        } catch  where error.code == .notRegistered && error.requested == requested {
            wrappedValue = nil
        } catch {
            Injection.stop(error, resolving: requested, by: Self.name, fileID: fileID, line: line)
        }
    }
}

extension OptionalInjected: Sendable where Service: Sendable {}

/// A property wrapper's type as a declared dependency (`.dependsOn(Injected<Feed>.self)`): what the wrapper
/// resolves, and how.
protocol InjectionWrapper {
    /// The wrapped service's dependency, under `key`.
    static func dependency(key: AnyHashable?) -> Dependency
}

extension Injected: InjectionWrapper {
    static var name: String { "@Injected" }

    static func dependency(key: AnyHashable?) -> Dependency {
        Dependency(key: ServiceKey(service: Service.self, key: key), kind: .required, synchronousUse: name)
    }
}

extension OptionalInjected: InjectionWrapper {
    static var name: String { "@OptionalInjected" }

    static func dependency(key: AnyHashable?) -> Dependency {
        Dependency(key: ServiceKey(service: Service.self, key: key), kind: .optional, synchronousUse: name)
    }
}

extension LazyInjected: InjectionWrapper {
    static var name: String { "@LazyInjected" }

    /// Resolved on first read: not part of a cycle of creations.
    static func dependency(key: AnyHashable?) -> Dependency {
        Dependency(key: ServiceKey(service: Service.self, key: key), kind: .deferred, synchronousUse: name)
    }
}

extension WeakInjected: InjectionWrapper {
    static var name: String { "@WeakInjected" }

    /// Resolved on first read: not part of a cycle of creations.
    static func dependency(key: AnyHashable?) -> Dependency {
        Dependency(key: ServiceKey(service: Service.self, key: key), kind: .deferred, synchronousUse: name)
    }
}

/// A reference that a property wrapper resolves on its first access: ``Lazy`` or ``WeakReference``.
protocol DeferredReference {
    associatedtype Value
    /// The service it refers to, unkeyed.
    static var wrappedService: ServiceKey { get }
    /// A reference that resolves from `scope`, or from the scope current at the first access when nil.
    init(scope: Scope?, key: AnyHashable?)
    var value: Value { get throws(ResolutionError) }
}

extension Lazy: DeferredReference {}
extension WeakReference: DeferredReference {}

/// What ``LazyInjected`` and ``WeakInjected`` keep: a reference made with the scope current when the owner is
/// made, and the declaration that a failed resolve names when it stops the program.
struct DeferredInjection<Reference: DeferredReference> {
    private let reference: Reference
    /// What it resolves and the wrapper's name, for the message.
    private let requested: ServiceKey
    private let wrapper: String
    private let fileID: String
    private let line: Int

    init(key: AnyHashable?, by wrapper: String, fileID: String, line: Int) {
        reference = Reference(scope: Scope.currentIfAny, key: key)
        requested = ServiceKey(service: Reference.wrappedService.service, key: key)
        self.wrapper = wrapper
        self.fileID = fileID
        self.line = line
    }

    /// The reference's value, resolved on first access, or the program stops with the reason.
    var value: Reference.Value {
        do throws(ResolutionError) {
            return try reference.value
        } catch {
            Injection.stop(error, resolving: requested, by: wrapper, fileID: fileID, line: line)
        }
    }
}

extension DeferredInjection: Sendable where Reference: Sendable {}

/// What the property wrappers share.
enum Injection {
    /// `Service` from the current scope, or the program stops with the reason.
    static func require<Service>(
        _ type: Service.Type, key: AnyHashable?, by wrapper: String, fileID: String, line: Int
    ) -> Service {
        let requested = ServiceKey(service: Service.self, key: key)
        do throws(ResolutionError) {
            return try Scope.current(resolving: requested).require(Service.self, key: key, fileID: fileID, line: line)
        } catch {
            stop(error, resolving: requested, by: wrapper, fileID: fileID, line: line)
        }
    }

    /// Stops the program with `error`'s full text, naming the property's declaration and, for a service whose
    /// factory is `async`, the wrapper and the rule: a property wrapper cannot throw, nor await.
    static func stop(
        _ error: ResolutionError, resolving requested: ServiceKey, by wrapper: String, fileID: String, line: Int
    ) -> Never {
        var error = error
        error.fileID = fileID
        error.line = line
        // The wrapper's own service, not one that the service's synchronous factory resolves.
        if error.code == .requiresAwait, !error.isMainActor, error.requested == requested {
            error.synchronousUse = wrapper
        }
        fatalError(error.description)
    }
}
